-- Where the request message was posted. KEYS: request. ARGV: the message (JSON). Set only when
-- the request exists: a stray id must not create a half request.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'message', ARGV[1])
return 1
