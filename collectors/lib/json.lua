-- json.lua — a small JSON encoder for collectors' output files.
-- Tables with a non-empty array part (or marked with json.array) become arrays;
-- other tables become objects with their keys sorted, so output is stable.
local json = {}

local array_mark = setmetatable({}, { __mode = "k" })

function json.array(t)
  array_mark[t] = true
  return t
end

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
                  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local encode

local function encode_table(t, indent, out)
  local pad, inner = indent, indent .. "  "
  if array_mark[t] or #t > 0 then
    if #t == 0 then out[#out + 1] = "[]" return end
    out[#out + 1] = "[\n"
    for i, v in ipairs(t) do
      out[#out + 1] = inner
      encode(v, inner, out)
      out[#out + 1] = i < #t and ",\n" or "\n"
    end
    out[#out + 1] = pad .. "]"
    return
  end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  if #keys == 0 then out[#out + 1] = "{}" return end
  -- objects of scalars stay on one line
  local flat = true
  for _, k in ipairs(keys) do if type(t[k]) == "table" then flat = false end end
  out[#out + 1] = flat and "{" or "{\n"
  for i, k in ipairs(keys) do
    if not flat then out[#out + 1] = inner end
    out[#out + 1] = quote(k) .. ": "
    encode(t[k], inner, out)
    if i < #keys then out[#out + 1] = flat and ", " or ",\n" end
  end
  out[#out + 1] = flat and "}" or "\n" .. pad .. "}"
end

encode = function(v, indent, out)
  local ty = type(v)
  if ty == "table" then encode_table(v, indent, out)
  elseif ty == "string" then out[#out + 1] = quote(v)
  elseif ty == "number" then
    out[#out + 1] = math.type(v) == "integer" and string.format("%d", v) or string.format("%.17g", v)
  elseif ty == "boolean" then out[#out + 1] = tostring(v)
  elseif v == nil then out[#out + 1] = "null"
  else error("cannot encode a " .. ty .. " as JSON", 3) end
end

function json.encode(v)
  local out = {}
  encode(v, "", out)
  out[#out + 1] = "\n"
  return table.concat(out)
end

return json
