-- Appends one record to the audit trail, chained to the last (src/audit/trail.ts `append`).
-- KEYS: the stream, the head (the last record's hash), the ids (record id -> stream id), the index
--       the record is filed in ('' = none: snapshots by `at`, gaps by `to`), the count of records
--       appended, and the count each environment's last snapshot was appended at (env -> count).
-- ARGV: the head expected ('' = an empty trail), the record's id, its JSON, its hash, its index score,
--       the environment of a snapshot ('' = not a snapshot).
-- Returns {'ok', stream id}; {'exists', stream id} when a record of that id is already there (an
-- append is idempotent by id); {'moved', head} when another replica appended meanwhile.
local existing = redis.call('HGET', KEYS[3], ARGV[2])
if existing then return {'exists', existing} end
local head = redis.call('GET', KEYS[2])
if not head then head = '' end
if head ~= ARGV[1] then return {'moved', head} end
local sid = redis.call('XADD', KEYS[1], '*', 'record', ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[2], sid)
if KEYS[4] ~= '' then redis.call('ZADD', KEYS[4], ARGV[5], sid) end
local appended = redis.call('INCR', KEYS[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[6], ARGV[6], appended) end
return {'ok', sid}
