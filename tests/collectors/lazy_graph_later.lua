-- lazy_graph_later.lua — test collector, after lazy_graph.lua in -c: the
-- run table lazy_graph.lua's report kept (LAZY_GRAPH_REPORT_RUN) still gives
-- the graphs that report never read, computed only now (lua/lp_graph.c: while
-- the counters files are open, for the whole report), equal to this report's
-- own.  Prints "lazy_graph_later: ok (N functions)" or fails naming what differs.
local function check(ok, what, ...)
  if not ok then error("lazy_graph_later: " .. string.format(what, ...), 0) end
end

return {
  name = "lazy_graph_later",
  probes = { entry = true, blocks = "count", calls = true },
  report = function(run)
    local kept = LAZY_GRAPH_REPORT_RUN
    check(kept, "lazy_graph.lua kept no run table (not before this one in -c?)")
    check(#kept.functions == #run.functions, "%d functions kept, %d now", #kept.functions, #run.functions)
    local compared = 0
    for i, f in ipairs(run.functions) do
      local k = kept.functions[i]
      check(k.name == f.name and k.address == f.address, "function %d: %s kept, %s now", i, k.name, f.name)
      if f.blocks and rawget(k, "blocks") == nil then
        check(k.blocks and #k.blocks == #f.blocks, "%s: %s blocks kept, %d now", f.name,
              tostring(k.blocks and #k.blocks), #f.blocks)
        for b = 1, #f.blocks do
          check(k.blocks[b].count == f.blocks[b].count, "%s block %d: %s kept, %s now", f.name, b,
                tostring(k.blocks[b].count), tostring(f.blocks[b].count))
        end
        check(#k.calls == #f.calls, "%s: %d calls kept, %d now", f.name, #k.calls, #f.calls)
        compared = compared + 1
      end
    end
    check(compared > 0, "no graph left unread by lazy_graph.lua")
    lazyprobe.print(string.format("lazy_graph_later: ok (%d functions)", compared))
  end,
}
