-- coverage.lua — which functions, lines and branches ran: an lcov tracefile
-- coverage.info (read by genhtml, `lcov --summary`, CI coverage services),
-- coverage-nolines.txt for the functions without DWARF line info, and a
-- short summary. The writer is collectors/lib/lcov.lua.
local lcov = require("lcov")

local coverage = {
  name = "coverage",
  outputs = "lcov tracefile coverage.info; coverage-nolines.txt; summary",
  probes = { entry = true, blocks = "cover" },
}

function coverage.report(run)
  local text, stats = lcov.tracefile(run, lazyprobe.lines)
  local ok, err = lazyprobe.write("coverage.info", text)
  if not ok then error(err, 0) end
  ok, err = lazyprobe.write("coverage-nolines.txt", lcov.nolines_summary(stats))
  if not ok then error(err, 0) end
  for _, line in ipairs(lcov.summary_lines(stats)) do lazyprobe.print(line) end
  if stats.records == 0 then
    lazyprobe.print("coverage: no function has line info: coverage.info is empty")
  end
end

return coverage
