-- dump_cover.lua — test collector: probes { entry = true, blocks = "cover" }; writes dump.json (see dumplib.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local dumplib = dofile(here .. "/dumplib.lua")
return dumplib.collector("dump_cover", { entry = true, blocks = "cover" })
