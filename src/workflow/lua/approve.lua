-- One approval; the last one needed makes the `approve` move. KEYS: request, open set. ARGV:
-- user, now ms, now ISO, the approval (JSON), the decision (JSON) set with the move, the number
-- of approvals needed. The approvals field is a JSON array, appended to as text.
--- @include "stateIn"
--- @include "expireIfDue"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if '{{MOVES.approve.deadline}}' == 'refuse' and expireIfDue(state, ARGV[2], ARGV[3]) then return {'expired'} end
if not stateIn(state, '{{MOVES.approve.from}}') then return {'moved', state} end
local raw = redis.call('HGET', KEYS[1], 'approvals')
local count = 0
if raw then
  for _, a in ipairs(cjson.decode(raw)) do
    if a.by == ARGV[1] then return {'duplicate'} end
    count = count + 1
  end
  raw = string.sub(raw, 1, -2) .. ',' .. ARGV[4] .. ']'
else
  raw = '[' .. ARGV[4] .. ']'
end
count = count + 1
redis.call('HSET', KEYS[1], 'approvals', raw, 'updatedAt', ARGV[3])
if count >= tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[1], 'state', '{{MOVES.approve.to}}', 'decision', ARGV[5])
  return {'approved'}
end
return {'counted'}
