-- Any move of MOVES (moves.ts). KEYS: request, open set. ARGV: the move's from-states (comma
-- list), its to-state, now ms, its deadline rule, now ISO, leaves the open set ('1'), then
-- field/value pairs to set.
--- @include "stateIn"
--- @include "expireIfDue"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if ARGV[4] ~= 'none' and expireIfDue(state, ARGV[3], ARGV[5]) then return {'expired'} end
if ARGV[4] == 'only-past' then return {'moved', state} end
if not stateIn(state, ARGV[1]) then return {'moved', state} end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'updatedAt', ARGV[5])
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[6] == '1' then redis.call('ZREM', KEYS[2], KEYS[1]) end
return {'ok', state}
