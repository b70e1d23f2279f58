"""The Lua scripts the Redis session store (``shared.RedisSessions``) runs: each a step that
must be atomic in Redis (a bound counted and a session admitted, a lookup that records its
use, a change kept only while the session is open, a claim let go only by its holder).

Each takes its keys and arguments as its comment says; those that tell time read Redis' own
clock (``_NOW``).
"""

from __future__ import annotations

# Redis' own clock, in milliseconds, so every worker agrees on what "idle" means.
_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "

# KEYS: all, holder's set, record. ARGV: idle ms, limit, per holder, id, principal, holder,
# state. 0 opened, 1 the holder's bound, 2 the total.
_OPEN = (
    _NOW
    + """
local cutoff = now - tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if ARGV[6] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 1 end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 2 end
redis.call('ZADD', KEYS[1], now, ARGV[4])
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
redis.call('HSET', KEYS[3], 'principal', ARGV[5], 'holder', ARGV[6], 'state', ARGV[7], 'used', now)
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return 0
"""
)

# KEYS: record, all. ARGV: idle ms, id, holder-set prefix, grain ms. The session's holder,
# state and ms since its use was recorded (0: now; not when another worker recorded it
# within the grain), else nil.
_FIND = (
    _NOW
    + """
local found = redis.call('HMGET', KEYS[1], 'holder', 'state', 'used')
if not found[2] then return nil end
if found[3] then
  local age = now - tonumber(found[3])
  if age >= 0 and age < tonumber(ARGV[4]) then return {found[1], found[2], age} end
end
local result = {found[1], found[2], 0}
redis.call('HSET', KEYS[1], 'used', now)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', now, ARGV[2])
if found[1] ~= '' then
  local held = ARGV[3] .. found[1]
  redis.call('ZADD', held, 'XX', now, ARGV[2])
  redis.call('PEXPIRE', held, ARGV[1])
end
return result
"""
)

# KEYS: record, all, stream claim, awaited answers. ARGV: id, holder-set prefix.
_CLOSE = """
local holder = redis.call('HGET', KEYS[1], 'holder')
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
if holder and holder ~= '' then redis.call('ZREM', ARGV[2] .. holder, ARGV[1]) end
return 0
"""

# KEYS: record. ARGV: state. The state kept only while the session is open.
_SAVE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'state', ARGV[1])
  return 1
end
return 0
"""

# KEYS: the session's awaited answers (ids scored by deadline), the answer's key. ARGV: the
# limit, ms to wait, the id, the asking worker's channel. 1 when registered, 0 at the limit.
_EXPECT = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[2])
return 1
"""
)

# KEYS: a claim. ARGV: its token, and ms to extend it by (0: let it go). Only its holder may.
_IF_OURS = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""


SCRIPTS = {
    "open": _OPEN,
    "find": _FIND,
    "close": _CLOSE,
    "save": _SAVE,
    "expect": _EXPECT,
    "if_ours": _IF_OURS,
}
