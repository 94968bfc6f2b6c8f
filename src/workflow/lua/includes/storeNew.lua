-- A new request stored at `key` from ARGV[a] (doc), ARGV[a+1] (state), ARGV[a+2] (updatedAt),
-- ARGV[a+3] (expiresAt, ms), ARGV[a+4] (its score in the open set `open`, '' when not open).
-- The caller has checked that no request of its key exists.
local function storeNew(key, open, a)
  redis.call('HSET', key, 'doc', ARGV[a], 'state', ARGV[a + 1], 'updatedAt', ARGV[a + 2], 'expiresAt', ARGV[a + 3])
  if ARGV[a + 4] ~= '' then redis.call('ZADD', open, ARGV[a + 4], key) end
end
