-- A revert of an audit record, filed by a user (the Revert button). KEYS: request, open set, the
-- record's revert claim. ARGV: as create.lua's, then when the claim expires (ms). Refused while
-- an earlier revert of the same record is open (two clicks at once file one): answers the
-- claim's holder then, else stores and claims.
--- @include "storeNew"
if redis.call('EXISTS', KEYS[1]) == 1 then return KEYS[1] end
local held = redis.call('GET', KEYS[3])
if held and redis.call('ZSCORE', KEYS[2], held) then return held end
storeNew(KEYS[1], KEYS[2], 1)
redis.call('SET', KEYS[3], KEYS[1])
redis.call('PEXPIREAT', KEYS[3], ARGV[6])
return ''
