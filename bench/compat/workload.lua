-- bench/compat/workload.lua: a Lua 5.4 workload for the compatibility suite (bench/compat.py).
-- Exercises what the interpreter's C code does outside a tight loop: errors raised and caught
-- (luaD_throw: longjmp through the interpreter's frames), coroutines (their own C stacks of
-- lua_resume/longjmp), metatables, string patterns and string.format, utf8, integer/float
-- arithmetic, table.sort with a Lua comparator, the garbage collector, io.write to stdout and
-- stderr. Prints deterministic results only (no addresses, no times).
-- Usage: lua workload.lua [same-blocks]
local out = {}
local function say(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  out[#out + 1] = table.concat(t, " ", 1, t.n)
end

-- errors: error objects, levels, nested pcall/xpcall, error in a metamethod
local ok, e = pcall(error, {code = 42})
say("pcall table error", ok, type(e), e.code)
ok, e = pcall(function() local t = nil; return t.x end)
say("index nil:", ok, (e:gsub("^.-:%d+: ", "")))
ok, e = xpcall(function() error("deep", 2) end, function(m) return "handled: " .. tostring(m) end)
say("xpcall", ok, e)
local depth = 0
local function recurse(n) depth = n; if n == 0 then error("bottom") end; return recurse(n - 1) + 1 end
ok, e = pcall(recurse, 150)
say("unwound from depth", depth, ok, (e:gsub("^.-:%d+: ", "")))
local mt = {__add = function(a, b) error("no add for " .. type(b)) end}
ok, e = pcall(function() return setmetatable({}, mt) + 1 end)
say("metamethod error", ok, (e:gsub("^.-:%d+: ", "")))
ok, e = pcall(string.rep, "x", -1)
say("string.rep -1", ok, #tostring(e))
ok, e = pcall(function() return 1 // 0 end)
say("integer div by zero", ok, (tostring(e):gsub("^.-:%d+: ", "")))

-- coroutines: generators, errors inside, wrap, close
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i * i) end end)
end
local s = 0
for v in gen(1000) do s = s + v end
say("sum of squares", s)
local co = coroutine.create(function(a) local b = coroutine.yield(a + 1); error("in coroutine " .. b) end)
say("resume", coroutine.resume(co, 1))
local r1, r2 = coroutine.resume(co, "x")
say("resume error", r1, (r2:gsub("^.-:%d+: ", "")), coroutine.status(co))
local co2 = coroutine.create(function() coroutine.yield() end)
coroutine.resume(co2)
say("close", coroutine.close(co2), coroutine.status(co2))

-- strings: patterns, gsub with functions, format, pack/unpack, utf8
local text = string.rep("The quick brown fox jumps over the lazy dog. ", 200)
local words = {}
for w in text:gmatch("%a+") do words[w:lower()] = (words[w:lower()] or 0) + 1 end
local keys = {}
for k in pairs(words) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) if words[a] ~= words[b] then return words[a] > words[b] end return a < b end)
say("words", #keys, keys[1], words[keys[1]], keys[#keys])
say("gsub", (text:sub(1, 44):gsub("(%w+)", function(w) return w:upper():reverse() end)))
say("format", string.format("%5.2f|%-8s|%x|%q|%g|%d", math.pi, "ab", 255, "a\nb", 1e300 * 10, math.mininteger))
say("pack", string.unpack("<i4 d s1", string.pack("<i4 d s1", -7, 0.5, "hi")))
say("utf8", utf8.len("héllo wörld"), utf8.char(72, 228, 8364), table.concat({utf8.codepoint("€ß", 1, -1)}, ","))
say("find", ("key = value"):find("(%w+)%s*=%s*(%w+)"))

-- numbers
local acc = 0
for i = 1, 200000 do acc = (acc * 31 + i) % 1000000007 end
say("int hash", acc, math.maxinteger + 1 == math.mininteger, 7 // 2, 7.0 // 2, 2 ^ 10, 10 % -3)
say("float", string.format("%.10f", math.sqrt(2)), math.floor(-3.5), math.tointeger(3.0), 3 | 5, ~0 >> 60)

-- tables, sort with a Lua comparator, the GC
local t = {}
local seed = 12345
for i = 1, 20000 do seed = (seed * 1103515245 + 12345) % 2147483648; t[i] = seed end
table.sort(t, function(a, b) return a > b end)
say("sorted", t[1], t[#t], #t)
-- Tables as keys are hashed by address: in the run compat.py compares with valgrind's
-- (argument "same-blocks"), where addresses differ, the weak table holds its tables as values.
local weak
if arg[1] == "same-blocks" then
  weak = setmetatable({}, {__mode = "v"})
  for i = 1, 1000 do weak[i] = {} end
else
  weak = setmetatable({}, {__mode = "k"})
  for i = 1, 1000 do weak[{}] = i end
end
collectgarbage("collect")
local n = 0
for _ in pairs(weak) do n = n + 1 end
say("weak keys after collect", n)
local closed = {}
do
  local x <close> = setmetatable({}, {__close = function() closed[#closed + 1] = "closed" end})
end
say("to-be-closed", closed[1])
local objs = {}
for i = 1, 5000 do objs[i] = setmetatable({i = i}, {__gc = function() end}) end
objs = nil
collectgarbage("collect")
say("gc count positive", collectgarbage("count") > 0)

-- load and goto
local f = load("local a, b = ...; return a * b")
say("load", f(6, 7))
local bad, msg = load("return +")
say("load syntax error", bad, msg)
do
  local i = 1
  ::top::
  if i < 5 then i = i + 1; goto top end
  say("goto", i)
end

io.write(table.concat(out, "\n"), "\n")
io.stderr:write("workload: ", #out, " lines to stdout\n")
os.exit(3)
