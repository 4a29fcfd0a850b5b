-- probecount.lua — a bench collector (not a built-in): how many probes the copies of a run
-- hold, for docs/PERFORMANCE.md.  Run it next to a built-in so that the graph is there:
--   lazyprobe run -c arcs,bench/probecount.lua -o DIR -- PROG ARGS
-- Sums, over the relocated functions (those with a graph in the run table), and separately
-- over those that ran (count > 0):
--   blocks, edges (every CFG edge, exits included), call sites;
--   edges - blocks + 1 per function: the edges off a spanning tree of the graph plus a virtual
--     edge EXIT->entry.  Since bd0659a the tree must also hold a virtual "leak" edge to EXIT for
--     every block that ends in a call, so more real edges are counted than this: it is a lower
--     bound.  The run table says neither which edges are counted nor how many probes save the
--     flags; bench/probeplan.c gets both from the relocator's plan (bench/collectors.py);
--   probes of -c coverage: 1 entry + 1 flag-free cover byte per block;
--   probes of -c arcs: 1 entry + counted edges + 1 per call site (with the lower bound);
--   the same without the spanning tree: 1 entry + every edge + call sites.
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
           coverage_probes = 0, arcs_probes = 0, arcs_probes_all_edges = 0 }
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
      local counted = ne - nb + 1
      if f.module == prog then
        addrs.relocated[#addrs.relocated + 1] = f.address_hex
        if f.count > 0 then addrs.ran[#addrs.ran + 1] = f.address_hex end
      end
      for _, g in ipairs(f.count > 0 and { all, ran } or { all }) do
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
      .. "coverage_probes=%d arcs_probes=%d arcs_probes_all_edges=%d", label, g.functions, g.blocks,
      g.edges, g.counted, g.calls, g.coverage_probes, g.arcs_probes, g.arcs_probes_all_edges))
  end
  lazyprobe.print(string.format("probecount: native=%d trapped=%d flow_errors=%d partial=%d relocated_without_graph=%d",
                                #native, #trapped, #flow, #partial, nograph))
  local ok, err = lazyprobe.write("probecount.json", json.encode({
    program = prog, relocated = all, ran = ran, native = native, trapped = trapped,
    flow_errors = flow, partial = partial, relocated_without_graph = nograph, addresses = addrs }))
  if not ok then error(err, 0) end
end

return pc
