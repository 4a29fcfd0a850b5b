-- arcs.lua — branch arc and call counts as BOLT profiles: arcs.fdata for the
-- program, arcs.<module>.fdata for each other module that ran (shared
-- libraries), for `llvm-bolt PROG -o OUT -data=arcs.fdata`. The writer and
-- the format decisions are in collectors/lib/fdata.lua.
local fdata = require("fdata")

local arcs = {
  name = "arcs",
  outputs = "BOLT profile arcs.fdata (+ arcs.<module>.fdata per shared library)",
  probes = { entry = true, arcs = true }, -- call counts: the counts of the blocks the calls end
}

local NAMED = 8 -- functions named in the line about counts that do not add up

function arcs.report(run)
  local profiles = fdata.profiles(run, lazyprobe)
  if #profiles == 0 then
    lazyprobe.print("arcs: no function ran: no profile written")
    return
  end
  local unsolved = {}
  for i, p in ipairs(profiles) do
    local name = i == 1 and "arcs.fdata" or "arcs." .. lazyprobe.basename(p.module) .. ".fdata"
    local ok, err = lazyprobe.write(name, p.text)
    if not ok then error(err, 0) end
    local s = p.stats
    lazyprobe.print(string.format("arcs: %s: %d functions, %d branch records, %d call records, %d entry records (%s)",
                                  name, s.functions, s.branches, s.calls, s.entries, lazyprobe.basename(p.module)))
    for _, fn in ipairs(s.unsolved) do unsolved[#unsolved + 1] = fn end
  end
  if #unsolved > 0 then -- precision lost is said, never silent
    local shown = {}
    for k = 1, math.min(#unsolved, NAMED) do shown[k] = unsolved[k] end
    lazyprobe.print(string.format("arcs: %d functions ran whose arc counts do not add up (flow_error): "
                                  .. "their branches are left out of the profile: %s%s", #unsolved,
                                  table.concat(shown, ", "), #unsolved > NAMED and ", ..." or ""))
  end
end

return arcs
