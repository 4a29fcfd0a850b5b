-- lazy_graph.lua — test collector: a function's blocks, edges and calls are
-- made Lua tables only when first read (lua/lp_graph.c), and that must not
-- show. Run on a program whose step() runs 20 times and samples at least
-- once; prints "lazy_graph: ok" or fails (a Lua error) naming what differs:
--  * a run table kept from sample() still reads its graph in report(), with
--    the counts of the sample (block 1 holds the entry: its count is the
--    f.count of that moment), although the counters files moved on;
--  * pairs(f) lists blocks, edges and calls before any of them was read;
--  * line_counts reads the graph in C before it is read, the Lua tables
--    after, with the same result; a count the collector changes, or blocks
--    it sets in place of ones never read, are what line_counts uses;
--  * the report's run table, kept in LAZY_GRAPH_REPORT_RUN for
--    lazy_graph_later.lua, whose report reads the graphs this one never did
--    (computed in C only then, after this report returned).
local kept, kept_count

local function find(run, name)
  for _, f in ipairs(run.functions) do
    if f.name == name then return f end
  end
  error("no function " .. name, 0)
end

local function check(ok, what, ...)
  if not ok then error("lazy_graph: " .. string.format(what, ...), 0) end
end

local function same_columns(a, b, what)
  check(#a.line == #b.line, "%s: %d lines, then %d", what, #a.line, #b.line)
  for i = 1, #a.line do
    check(a.file[i] == b.file[i] and a.line[i] == b.line[i] and a.count[i] == b.count[i],
          "%s: row %d: %s:%d=%d, then %s:%d=%d", what, i, a.file[i], a.line[i], a.count[i], b.file[i],
          b.line[i], b.count[i])
  end
end

return {
  name = "lazy_graph",
  interval = 0.05,
  probes = { entry = true, blocks = "count", calls = true },
  sample = function(run)
    local f = find(run, "step")
    if not kept and f.count > 0 and f.count < 20 then kept, kept_count = run, f.count end
  end,
  report = function(run)
    LAZY_GRAPH_REPORT_RUN = run
    check(kept, "no sample saw step() part way")
    local old = find(kept, "step")
    check(rawget(old, "blocks") == nil, "a kept run's graph was made tables before it was read")
    check(old.blocks[1].count == kept_count, "kept run: step's block 1 = %s, its count then %d",
          tostring(old.blocks[1].count), kept_count)

    local step = find(run, "step")
    check(step.count == 20, "step ran %d times, not 20", step.count)
    local keys = {}
    for k in pairs(step) do keys[k] = true end
    check(keys.blocks and keys.edges and keys.calls, "pairs(f) lacks blocks, edges or calls")
    check(step.blocks[1].count == 20, "step's block 1 = %s, not 20", tostring(step.blocks[1].count))

    local main = find(run, "main")
    check(rawget(main, "blocks") == nil, "main's graph made tables before it was read")
    local from_c = lazyprobe.line_counts(main)
    check(from_c, "main has no line counts: built without -g?")
    check(rawget(main, "blocks") == nil, "line_counts made main's graph tables")
    check(#main.blocks > 0 and rawget(main, "blocks") ~= nil, "main.blocks not made on reading")
    same_columns(from_c, lazyprobe.line_counts(main), "main's line counts from C, then from its tables")

    for _, b in ipairs(step.blocks) do b.count = 7777 end
    local changed = lazyprobe.line_counts(step)
    check(#changed.count > 0, "step has no line counts")
    for i = 1, #changed.count do
      check(changed.count[i] == 7777, "line %d of step counts %d, not the 7777 the collector set",
            changed.line[i], changed.count[i])
    end
    local kmain = find(kept, "main")
    kmain.blocks = {} -- never read: no block, so the entry line alone, at f.count
    local entry_only = lazyprobe.line_counts(kmain)
    check(#entry_only.line == 1 and entry_only.count[1] == kmain.count,
          "main with blocks set to {}: %d lines (the first at %s), not its entry line alone at %d",
          #entry_only.line, tostring(entry_only.count[1]), kmain.count)
    lazyprobe.print("lazy_graph: ok")
  end,
}
