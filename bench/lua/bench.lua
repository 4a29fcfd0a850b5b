-- CPU-bound Lua script for bench/run.py: a mix of recursive calls, table inserts and sorts,
-- string building and closures. Usage: lua bench.lua [SCALE]   (SCALE 1 ~ 1 s natively here)
-- Prints a checksum so that native, gcov and lazyprobe runs can be compared.
local scale = tonumber(arg and arg[1]) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function tables(n)
  local t = {}
  local x = 42
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[#t + 1] = x
  end
  table.sort(t)
  local recs = {}
  for i = 1, n // 4 do
    table.insert(recs, { key = t[i] % 1000, id = i, name = "r" .. i })
  end
  table.sort(recs, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.id < b.id
  end)
  local s = 0
  for i = 1, #recs, 97 do s = s + recs[i].id end
  for k = 1, #t, 2 do table.remove(t) end
  return s + #t
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%x;", i, i * 7)
  end
  local s = table.concat(parts)
  local count = 0
  for a, b in s:gmatch("(%d+):(%x+);") do
    if tonumber(b, 16) == tonumber(a) * 7 then count = count + 1 end
  end
  local u = s:sub(1, 2000):upper():rep(10)
  return count + #u + #(s:gsub("1", "one"))
end

local function closures(n)
  local function counter(step)
    local c = 0
    return function() c = c + step; return c end
  end
  local fs = {}
  for i = 1, 64 do fs[i] = counter(i) end
  local total = 0
  for i = 1, n do total = total + fs[(i % 64) + 1]() end
  local compose = function(f, g) return function(x) return f(g(x)) end end
  local inc = function(x) return x + 1 end
  local dbl = function(x) return x * 2 end
  local h = compose(inc, compose(dbl, inc))
  for i = 1, n // 4 do total = total + h(i) % 7 end
  return total
end

local sum = 0
for r = 1, scale do
  sum = sum + fib(27)
  sum = sum + tables(200000)
  sum = sum + strings(100000)
  sum = sum + closures(2000000)
end
print(string.format("bench.lua scale=%d checksum=%d", scale, sum))
