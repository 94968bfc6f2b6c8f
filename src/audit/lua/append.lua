-- Appends one record to the audit trail, chained to the last (src/audit/trail.ts `append`).
-- KEYS: the stream, the head (the last record's hash), the ids (record id -> stream id), the index
--       the record is filed in ('' = none: snapshots by `at`, gaps by `to`), the count of records
--       appended, the count each environment's last snapshot was appended at (env -> count), and
--       the count of each environment's changes appended (env -> count: the environment's mark).
-- ARGV: the head expected ('' = an empty trail), the record's id, its JSON, its hash, its index score,
--       the environment of a snapshot ('' = not a snapshot), the environment of a change ('' = not
--       a change), the mark a snapshot's reading began at ('' = appended whatever was appended since).
-- Returns {'ok', stream id}; {'exists', stream id} when a record of that id is already there (an
-- append is idempotent by id); {'grown', mark} when a change of the snapshot's environment was
-- appended since its reading began (the snapshot would precede it in the chain without holding it);
-- {'moved', head} when another replica appended meanwhile.
local existing = redis.call('HGET', KEYS[3], ARGV[2])
if existing then return {'exists', existing} end
if ARGV[8] ~= '' then
  local mark = redis.call('HGET', KEYS[7], ARGV[6]) or '0'
  if mark ~= ARGV[8] then return {'grown', mark} end
end
local head = redis.call('GET', KEYS[2])
if not head then head = '' end
if head ~= ARGV[1] then return {'moved', head} end
local sid = redis.call('XADD', KEYS[1], '*', 'record', ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[2], sid)
if KEYS[4] ~= '' then redis.call('ZADD', KEYS[4], ARGV[5], sid) end
local appended = redis.call('INCR', KEYS[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[6], ARGV[6], appended) end
if ARGV[7] ~= '' then redis.call('HINCRBY', KEYS[7], ARGV[7], 1) end
return {'ok', sid}
