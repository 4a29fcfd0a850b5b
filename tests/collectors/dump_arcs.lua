-- dump_arcs.lua — test collector: probes { entry = true, arcs = true, calls = true }; writes dump.json (see dumplib.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local dumplib = dofile(here .. "/dumplib.lua")
return dumplib.collector("dump_arcs", { entry = true, arcs = true, calls = true })
