-- A review, once. KEYS: request, unreviewed set; with a revert: its key, the open set. ARGV: the
-- review (JSON); with a revert, its fields as create.lua's. Only a break-glass change in
-- REVIEWED_IN takes one (rules.ts's takesReview, asked first for its refusal); the first review
-- holds, and only that review's revert is stored: a review that keeps the change racing one that
-- reverts it leaves no revert behind.
--- @include "storeNew"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'missing' end
if state ~= '{{REVIEWED_IN}}' or not redis.call('HGET', KEYS[1], 'breakGlass') then return 'not-reviewable' end
if redis.call('HSETNX', KEYS[1], 'review', ARGV[1]) == 0 then return 'already-reviewed' end
redis.call('ZREM', KEYS[2], KEYS[1])
if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 0 then storeNew(KEYS[3], KEYS[4], 2) end
return 'reviewed'
