-- coverage.lua — which functions, lines and branches ran: an lcov tracefile
-- coverage.info (read by genhtml, `lcov --summary`, CI coverage services),
-- coverage-nolines.txt for the functions without DWARF line info, and a
-- short summary. The writer is collectors/lib/lcov.lua.
local lcov = require("lcov")

local coverage = {
  name = "coverage",
  outputs = "lcov tracefile coverage.info; coverage-nolines.txt; summary",
  probes = { entry = "cover", blocks = "cover", lines_only = true }, -- FNDA 0/1 alone, as DA; counts with calls or arcs
}

function coverage.report(run)
  local pieces, stats = lcov.tracefile(run, lazyprobe)
  local ok, err = lazyprobe.write("coverage.info", pieces)
  if not ok then error(err, 0) end
  ok, err = lazyprobe.write("coverage-nolines.txt", lcov.nolines_summary(stats, run.probes and run.probes.entry == "cover"))
  if not ok then error(err, 0) end
  for _, line in ipairs(lcov.summary_lines(stats)) do lazyprobe.print(line) end
  if stats.records == 0 then
    lazyprobe.print("coverage: no function has line info: coverage.info is empty")
  end
  -- precision lost is said, never silent: code reached through an indirect
  -- jump that was not understood runs in the original body, unmeasured
  local partial = {}
  for _, f in ipairs(run.functions) do
    if f.count > 0 and f.note:find("indirect jump leaves the copy", 1, true) then
      partial[#partial + 1] = f.name
    end
  end
  if #partial > 0 then
    table.sort(partial)
    lazyprobe.print(string.format("coverage: %d functions measured only up to an indirect jump they "
                                  .. "leave the copy by (blocks after it may show as not run): %s",
                                  #partial, table.concat(partial, ", ")))
  end
end

return coverage
