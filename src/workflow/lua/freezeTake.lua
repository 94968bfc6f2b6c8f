-- An environment's freeze taken. KEYS: the freeze. ARGV: now ms, '1' to take it whatever its end
-- (a lift). Returns the freeze taken (and deleted), or nil: none, or (without lift) not over yet.
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
if ARGV[2] ~= '1' then
  local untilMs = tonumber(cjson.decode(raw).untilMs)
  if untilMs == nil or tonumber(ARGV[1]) < untilMs then return nil end
end
redis.call('DEL', KEYS[1])
return raw
