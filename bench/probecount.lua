-- probecount.lua — a bench collector (not a built-in): how many probes the copies of a run
-- hold, for docs/PERFORMANCE.md.  Run it next to a built-in so that the graph is there:
--   lazyprobe run -c arcs,bench/probecount.lua -o DIR -- PROG ARGS
-- Sums, over the relocated functions (those with a graph in the run table), and separately
-- over those that ran (count > 0):
--   blocks, edges (every CFG edge, exits included), call sites;
--   edges - blocks per function: the edges off a spanning tree of the blocks and EXIT (the
--     entry counter measures the virtual edge EXIT->entry, so it is off the tree).  The tree must
--     also hold a virtual "leak" edge to EXIT for every block that ends in a call, so more real
--     edges are counted than this: it is a lower bound.  The run table says neither which edges are counted nor how many probes save the
--     flags; bench/probeplan.c gets both from the relocator's plan (bench/collectors.py);
--   probes of -c coverage: 1 entry + 1 flag-free cover byte per block;
--   probes of -c arcs: 1 entry + counted edges + 1 per call site (with the lower bound);
--   the same without the spanning tree: 1 entry + every edge + call sites.
-- At run time (the counts of -c arcs): executed_edges, the sum of every edge's count;
--   increments, what the counters were incremented: entries + the counted edges' own counts;
--   increments_bound, the same for the best spanning tree had the counts been known
--   beforehand (a maximum spanning tree on the counts, with the same virtual edges: a leak to
--   EXIT for every block that ends in a call and falls through; EXIT->entry is the entry
--   counter's, off the tree): what a perfect
--   estimate of edge frequencies would give.
-- Also lists the functions left native or trapped, those with a flow_error, and those whose
-- note says an indirect jump leaves the copy (measured only in part).
-- Writes probecount.json (the sums and the lists) and prints one summary line per group.
local json = require("json")

local pc = {
  name = "probecount",
  outputs = "probecount.json: probe counts of the copies (bench)",
  probes = { entry = true },
}

local function zero()
  return { functions = 0, blocks = 0, edges = 0, counted = 0, calls = 0,
           coverage_probes = 0, arcs_probes = 0, arcs_probes_all_edges = 0,
           executed_edges = 0, increments = 0, increments_bound = 0 }
end

local function find(up, v)
  while up[v] ~= v do
    up[v] = up[up[v]]
    v = up[v]
  end
  return v
end

-- The run-time sums of F (see the top): executed edges, increments, their bound.
local function executed(f)
  local up, exit = {}, 0 -- block indices; 0 is EXIT
  for v = 0, #f.blocks do up[v] = v end
  local call_at = {}
  for _, c in ipairs(f.calls or {}) do call_at[c.site] = true end
  local ends_in_call, byaddr = {}, {}
  for i, b in ipairs(f.blocks) do byaddr[#byaddr + 1] = i end
  table.sort(byaddr, function(x, y) return f.blocks[x].address < f.blocks[y].address end)
  local sites = {}
  for site in pairs(call_at) do sites[#sites + 1] = site end
  table.sort(sites)
  local k = 1 -- calls end their blocks: the last site inside a block is its end
  for _, i in ipairs(byaddr) do
    local b = f.blocks[i]
    while sites[k] and sites[k] < b.address do k = k + 1 end
    while sites[k] and sites[k] < b.address + b.size do
      ends_in_call[i] = true
      k = k + 1
    end
  end
  local total, incs, sorted = 0, f.count, {}
  for _, e in ipairs(f.edges) do
    total = total + (e.count or 0)
    incs = incs + (e.measured or 0)
    if e.kind == "fall" and ends_in_call[e.from] then
      local a, x = find(up, e.from), find(up, exit)
      if a ~= x then up[a] = x end
    end
    sorted[#sorted + 1] = e
  end
  table.sort(sorted, function(x, y) return (x.count or 0) > (y.count or 0) end)
  local bound = f.count
  for _, e in ipairs(sorted) do
    local a, b = find(up, e.from), find(up, e.to)
    if a == b then bound = bound + (e.count or 0) else up[a] = b end
  end
  return total, incs, bound
end

function pc.report(run)
  local all, ran = zero(), zero()
  local native, trapped, flow, partial, nograph = {}, {}, {}, {}, 0
  local addrs = { relocated = {}, ran = {} }   -- link-time entries (hex), for bench/probeplan
  local prog = run.processes and run.processes[1] and run.processes[1].program
  for _, f in ipairs(run.functions) do
    if f.state == "native" then native[#native + 1] = f.name .. " (" .. f.note .. ")" end
    if f.state == "trapped" then trapped[#trapped + 1] = f.name .. " (" .. f.note .. ")" end
    if f.flow_error then flow[#flow + 1] = f.name .. " (" .. f.flow_error .. ")" end
    if f.count > 0 and (f.note or ""):find("indirect jump leaves the copy", 1, true) then
      partial[#partial + 1] = f.name .. " (" .. f.note .. ")"
    end
    if f.state == "relocated" and not f.blocks then nograph = nograph + 1 end
    if f.blocks and f.edges then
      local nb, ne, nc = #f.blocks, #f.edges, f.calls and #f.calls or 0
      local counted = ne - nb
      if f.module == prog then
        addrs.relocated[#addrs.relocated + 1] = f.address_hex
        if f.count > 0 then addrs.ran[#addrs.ran + 1] = f.address_hex end
      end
      local total, incs, bound = 0, 0, 0
      if f.count > 0 then total, incs, bound = executed(f) end
      for _, g in ipairs(f.count > 0 and { all, ran } or { all }) do
        g.executed_edges = g.executed_edges + total
        g.increments = g.increments + incs
        g.increments_bound = g.increments_bound + bound
        g.functions = g.functions + 1
        g.blocks = g.blocks + nb
        g.edges = g.edges + ne
        g.counted = g.counted + counted
        g.calls = g.calls + nc
        g.coverage_probes = g.coverage_probes + 1 + nb
        g.arcs_probes = g.arcs_probes + 1 + counted -- arcs counts no call sites (their blocks' counts)
        g.arcs_probes_all_edges = g.arcs_probes_all_edges + 1 + ne
      end
    end
  end
  for _, l in ipairs({ native, trapped, flow, partial }) do table.sort(l) end
  for label, g in pairs({ relocated = all, ran = ran }) do
    lazyprobe.print(string.format(
      "probecount: %s: functions=%d blocks=%d edges=%d counted_edges=%d call_sites=%d "
      .. "coverage_probes=%d arcs_probes=%d arcs_probes_all_edges=%d executed_edges=%d increments=%d "
      .. "increments_bound=%d", label, g.functions, g.blocks, g.edges, g.counted, g.calls, g.coverage_probes,
      g.arcs_probes, g.arcs_probes_all_edges, g.executed_edges, g.increments, g.increments_bound))
  end
  lazyprobe.print(string.format("probecount: native=%d trapped=%d flow_errors=%d partial=%d relocated_without_graph=%d",
                                #native, #trapped, #flow, #partial, nograph))
  local ok, err = lazyprobe.write("probecount.json", json.encode({
    program = prog, relocated = all, ran = ran, native = native, trapped = trapped,
    flow_errors = flow, partial = partial, relocated_without_graph = nograph, addresses = addrs }))
  if not ok then error(err, 0) end
end

return pc
