-- arcs-noreport.lua — bench collector: the probes of -c arcs (entry + counted edges; call
-- counts come from the blocks the calls end) and an empty report, to separate the probes' cost from the fdata writer's.
return { name = "arcs-noreport", outputs = "nothing (bench)", probes = { entry = true, arcs = true },
         report = function(run) end }
