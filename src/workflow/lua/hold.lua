-- A freeze's hold. KEYS: request. ARGV: the freeze (JSON). Only a request waiting for its
-- `start` move is held, and marked once per freeze.
--- @include "stateIn"
local state = redis.call('HGET', KEYS[1], 'state')
if not state or not stateIn(state, '{{MOVES.start.from}}') then return 0 end
if redis.call('HGET', KEYS[1], 'held') == ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'held', ARGV[1])
return 1
