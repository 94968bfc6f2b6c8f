-- The `breakGlass` move. KEYS: request, open set, unreviewed set. ARGV: now ms, now ISO, the
-- break-glass (JSON), its review deadline (ms). The same move out of pending as the last
-- approval: one caller wins.
--- @include "stateIn"
--- @include "expireIfDue"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if '{{MOVES.breakGlass.deadline}}' == 'refuse' and expireIfDue(state, ARGV[1], ARGV[2]) then return {'expired'} end
if not stateIn(state, '{{MOVES.breakGlass.from}}') then return {'moved', state} end
redis.call('HSET', KEYS[1], 'state', '{{MOVES.breakGlass.to}}', 'breakGlass', ARGV[3], 'updatedAt', ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], KEYS[1])
return {'approved'}
