-- check_source.lua — test collector (no probes of its own: `lazyprobe report
-- -c check_source.lua DIR` on a run's counters): for every function of the
-- run, lazyprobe.line_counts(f) and lazyprobe.branch_counts(f) (C) must equal
-- the plain-Lua statement of their rules in source_ref.lua. Prints one line
-- "check_source: F functions, L lines, B branch ways agree" and fails (a Lua
-- error, exit status 125) at the first difference, naming the function.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ref = dofile(here .. "/source_ref.lua")

local function same(what, f, a, b)
  if (a == nil) ~= (b == nil) then
    error(string.format("%s %s: C says %s, reference says %s", what, f.name, a and "a table" or "nil",
                        b and "a table" or "nil"), 0)
  end
  if not a then return 0 end
  for k, col in pairs(b) do
    if type(col) ~= "table" then
      if a[k] ~= col then error(string.format("%s %s: %s %s, reference %s", what, f.name, k, a[k], col), 0) end
    else
      if #a[k] ~= #col then
        error(string.format("%s %s: %d %s, reference %d", what, f.name, #a[k], k, #col), 0)
      end
      for i = 1, #col do
        if a[k][i] ~= col[i] then
          error(string.format("%s %s: %s[%d] = %s, reference %s", what, f.name, k, i, a[k][i], col[i]), 0)
        end
      end
    end
  end
  return #b.file
end

return {
  name = "check_source",
  outputs = "one line: how many functions, lines and branch ways agree",
  probes = { entry = true },
  report = function(run)
    local nf, nl, nb = 0, 0, 0
    for _, f in ipairs(run.functions) do
      if f.state ~= "native" then
        -- first from the graph in C (not read yet), then from the tables the
        -- reference's reads made
        local lines, branches = lazyprobe.line_counts(f), lazyprobe.branch_counts(f)
        local ref_lines, ref_branches = ref.line_counts(lazyprobe.lines, f), ref.branch_counts(lazyprobe.lines, f)
        nl = nl + same("line_counts", f, lines, ref_lines)
        nb = nb + same("branch_counts", f, branches, ref_branches)
        same("line_counts from tables", f, lazyprobe.line_counts(f), ref_lines)
        same("branch_counts from tables", f, lazyprobe.branch_counts(f), ref_branches)
        nf = nf + 1
      end
    end
    lazyprobe.print(string.format("check_source: %d functions, %d lines, %d branch ways agree", nf, nl, nb))
  end,
}
