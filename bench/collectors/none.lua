-- none.lua — asks no probe and writes nothing: lazyprobe's copies alone
-- (bench/copies.py; the "copies" variant of bench/collectors.py).
return { name = "none", probes = { entry = false }, report = function(run) end }
