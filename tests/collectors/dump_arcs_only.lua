-- dump_arcs_only.lua — test collector: probes { entry = true, arcs = true } (no call probes: the call
-- counts in dump.json are the counts of the blocks the calls end, solved from the arcs); writes dump.json.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local dumplib = dofile(here .. "/dumplib.lua")
return dumplib.collector("dump_arcs_only", { entry = true, arcs = true })
