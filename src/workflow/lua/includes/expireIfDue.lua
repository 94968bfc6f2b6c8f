-- On KEYS[1] (the request) and KEYS[2] (the open set), the request's `state` read: where the
-- `expire` move may leave from it and the deadline has passed at `nowMs`, the request makes that
-- move (at `nowIso`) and leaves the open set; true then (the script answers `expired`).
local function expireIfDue(state, nowMs, nowIso)
  if not stateIn(state, '{{MOVES.expire.from}}') then return false end
  local deadline = tonumber(redis.call('HGET', KEYS[1], 'expiresAt'))
  if deadline and tonumber(nowMs) >= deadline then
    redis.call('HSET', KEYS[1], 'state', '{{MOVES.expire.to}}', 'updatedAt', nowIso)
    redis.call('ZREM', KEYS[2], KEYS[1])
    return true
  end
  return false
end
