-- json.lua — a small JSON encoder for collectors' output files.
-- Tables with a non-empty array part (or marked with json.array) become arrays;
-- other tables become objects with their keys sorted, so output is stable.
-- Objects whose values are all scalars are written on one line.
-- json.raw(text) is a value written as TEXT, already JSON (a long array a
-- collector wrote with lazyprobe.format_rows, say); json.quote(s) is string
-- S as JSON writes it, quotes included.
local json = {}

local array_mark = setmetatable({}, { __mode = "k" })
local raw_text = setmetatable({}, { __mode = "k" })

function json.array(t)
  array_mark[t] = true
  return t
end

function json.raw(text)
  local t = {}
  raw_text[t] = text
  return t
end

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
                  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function escape(c) return escapes[c] or string.format("\\u%04x", c:byte()) end

local find, gsub, format, mtype, sort, concat = string.find, string.gsub, string.format,
  math.type, table.sort, table.concat

-- keys and values such as module paths repeat: quote each string once
local quoted = {}

local function quote(s)
  local q = quoted[s]
  if q then return q end
  if not find(s, '[%c"\\]') then q = '"' .. s .. '"'
  else q = '"' .. gsub(s, '[%c"\\]', escape) .. '"' end
  quoted[s] = q
  return q
end
json.quote = quote

local encode

local function scalar(v)
  local ty = type(v)
  if ty == "string" then return quote(v) end
  if ty == "number" then return mtype(v) == "integer" and tostring(v) or format("%.17g", v) end
  if ty == "boolean" then return tostring(v) end
  if v == nil then return "null" end
  error("cannot encode a " .. ty .. " as JSON", 4)
end

local function encode_table(t, indent, out, n)
  local inner = indent .. "  "
  if array_mark[t] or #t > 0 then
    local len = #t
    if len == 0 then out[n + 1] = "[]" return n + 1 end
    out[n + 1] = "[\n"
    n = n + 1
    for i = 1, len do
      out[n + 1] = inner
      n = encode(t[i], inner, out, n + 1)
      out[n + 1] = i < len and ",\n" or "\n"
      n = n + 1
    end
    out[n + 1] = indent .. "]"
    return n + 1
  end
  local keys, flat = {}, true
  for k, v in pairs(t) do
    keys[#keys + 1] = tostring(k)
    if type(v) == "table" then flat = false end
  end
  if #keys == 0 then out[n + 1] = "{}" return n + 1 end
  sort(keys)
  if flat then
    out[n + 1] = "{"
    n = n + 1
    for i = 1, #keys do
      local k = keys[i]
      out[n + 1] = i == 1 and quote(k) or ", " .. quote(k)
      out[n + 2] = ": "
      out[n + 3] = scalar(t[k])
      n = n + 3
    end
    out[n + 1] = "}"
    return n + 1
  end
  out[n + 1] = "{\n"
  n = n + 1
  for i, k in ipairs(keys) do
    out[n + 1] = inner .. quote(k) .. ": "
    n = encode(t[k], inner, out, n + 1)
    out[n + 1] = i < #keys and ",\n" or "\n"
    n = n + 1
  end
  out[n + 1] = indent .. "}"
  return n + 1
end

encode = function(v, indent, out, n)
  if type(v) == "table" then
    if raw_text[v] then out[n + 1] = raw_text[v] return n + 1 end
    return encode_table(v, indent, out, n)
  end
  out[n + 1] = scalar(v)
  return n + 1
end

function json.encode(v)
  local out = {}
  local n = encode(v, "", out, 0)
  out[n + 1] = "\n"
  return concat(out)
end

return json
