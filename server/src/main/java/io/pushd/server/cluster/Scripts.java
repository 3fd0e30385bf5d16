package io.pushd.server.cluster;

/**
 * The server-side scripts: each runs atomically in Redis, so a topic's number and its stored
 * event come from one step on whichever node publishes (the design of Centrifugo's Redis broker:
 * a meta hash of epoch and offset, a stream with MAXLEN, an idempotent result key).
 */
final class Scripts {

    /** The age trim looks at a topic at most this often (see {@link #PUBLISH}). */
    static final long TRIM_EVERY_MILLIS = 1000;

    private Scripts() {
    }

    /**
     * The topic's epoch and head, making a new epoch when there is none or when Redis holds less
     * of the caller's epoch than the caller has seen (a restart without persistence, a lagging
     * replica): then no {@code <epoch>-<seq>} is ever given to two events.
     * KEYS: meta, stream. ARGV: new epoch, seen epoch, seen head. Returns {epoch, head}.
     */
    static final String ENSURE_EPOCH = """
            local e = redis.call('HGET', KEYS[1], 'e')
            local s = tonumber(redis.call('HGET', KEYS[1], 's') or '0')
            if (not e) or (e == ARGV[2] and s < tonumber(ARGV[3])) then
              e = ARGV[1]
              s = 0
              redis.call('DEL', KEYS[2])
              redis.call('HSET', KEYS[1], 'e', e, 's', 0)
            end
            return {e, tostring(s)}
            """;

    /**
     * One publish. KEYS: meta, stream, result key (any key of the topic when there is no
     * idempotency key). ARGV: 1 data, 2 retention count, 3 retention age ms, 4 new epoch, 5 seen
     * epoch, 6 seen head, 7 dedupe window ms ('' = no idempotency key), 8 channel, 9 PUBLISH or
     * SPUBLISH. Returns {epoch, seq, created 1/0, append ms}.
     *
     * <p>Retention by count is {@code XADD MAXLEN ~} (whole macro nodes, O(1) per publish). By
     * age it is not looked at on every publish: it cost more Redis CPU than the rest of the script
     * (an {@code XRANGE COUNT 32} read into Lua per publish). The meta hash's field {@code n} holds
     * the time of the next look: when the oldest kept event turns older than the retention age,
     * but at most once per {@link #TRIM_EVERY_MILLIS} (never later than that past its expiry; the
     * age is at least a minute). A look binary-searches the stream (IDs are {@code <seq>-0},
     * times grow with seq) for the first event young enough, {@code XTRIM MINID} to it, and sets
     * {@code n} again. A stale {@code n} (a new epoch, a shorter retention age, the clock set
     * back) is at worst early, or more than an age ahead, and then looked at at once.
     */
    static final String PUBLISH = """
            local meta, stream, result = KEYS[1], KEYS[2], KEYS[3]
            local m = redis.call('HMGET', meta, 'e', 's', 'n')
            local e = m[1]
            if ARGV[7] ~= '' then
              local r = redis.call('HMGET', result, 'e', 's')
              if r[1] and r[1] == e then
                return {r[1], r[2], 0, 0}
              end
            end
            local s = tonumber(m[2] or '0')
            if (not e) or (e == ARGV[5] and s < tonumber(ARGV[6])) then
              e = ARGV[4]
              redis.call('DEL', stream)
              redis.call('HSET', meta, 'e', e, 's', 0)
            end
            s = redis.call('HINCRBY', meta, 's', 1)
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ts = string.format('%.0f', now)
            redis.call('XADD', stream, 'MAXLEN', '~', ARGV[2], s .. '-0', 't', ts, 'd', ARGV[1])
            local age = tonumber(ARGV[3])
            local due = tonumber(m[3] or '0')
            if age > 0 and (now >= due or due > now + age) then
              local cutoff = now - age
              local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
              local firstTs = tonumber(first[2][2])
              if firstTs < cutoff then
                -- every event before lo is too old; the one at hi (the new one, at first) is not
                local lo = tonumber(string.match(first[1], '^(%d+)')) + 1
                local hi = s
                firstTs = now
                while lo < hi do
                  local mid = math.floor((lo + hi) / 2)
                  local x = redis.call('XRANGE', stream, mid .. '-0', '+', 'COUNT', 1)[1]
                  if tonumber(x[2][2]) >= cutoff then
                    hi = mid
                    firstTs = tonumber(x[2][2])
                  else
                    lo = tonumber(string.match(x[1], '^(%d+)')) + 1
                  end
                end
                redis.call('XTRIM', stream, 'MINID', hi .. '-0')
              end
              redis.call('HSET', meta, 'n', string.format('%.0f', math.max(firstTs + age, now + math.min(age, TRIM_EVERY))))
            end
            if ARGV[7] ~= '' then
              redis.call('HSET', result, 'e', e, 's', s)
              redis.call('PEXPIRE', result, ARGV[7])
            end
            redis.call(ARGV[9], ARGV[8], e .. ' ' .. s .. ' ' .. ts .. ' ' .. ARGV[1])
            return {e, tostring(s), 1, tonumber(ts)}
            """.replace("TRIM_EVERY", Long.toString(TRIM_EVERY_MILLIS));
}
