-- An environment frozen. KEYS: the freeze. ARGV: now ms, the new freeze (JSON). One move, so two
-- freezes at once cannot both win: a freeze in force stays ({'running', it}); one past its end,
-- not yet taken by the sweep, is replaced and returned so that its end is recorded
-- ({'replaced', it}); else {'set'}.
local raw = redis.call('GET', KEYS[1])
if raw then
  local untilMs = tonumber(cjson.decode(raw).untilMs)
  if untilMs == nil or tonumber(ARGV[1]) < untilMs then return {'running', raw} end
end
redis.call('SET', KEYS[1], ARGV[2])
if raw then return {'replaced', raw} end
return {'set'}
