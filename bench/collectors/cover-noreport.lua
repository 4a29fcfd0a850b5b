-- cover-noreport.lua — bench collector: the probes of -c coverage (entry and block cover bytes)
-- and an empty report, to separate the probes' cost from the coverage report's (lcov writer).
return { name = "cover-noreport", outputs = "nothing (bench)", probes = { entry = "cover", blocks = "cover" },
         report = function(run) end }
