-- A new request's fields, and its place among the open ones, unless a request of its id exists.
-- KEYS: request, open set. ARGV: as storeNew's from 1.
--- @include "storeNew"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
storeNew(KEYS[1], KEYS[2], 1)
return 1
