package io.pushd.server.cluster;

/**
 * The server-side scripts: each runs atomically in Redis, so a topic's number and its stored
 * event come from one step on whichever node publishes (the design of Centrifugo's Redis broker:
 * a meta hash of epoch and offset, a stream with MAXLEN, an idempotent result key).
 */
final class Scripts {

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
     */
    static final String PUBLISH = """
            local meta, stream, result = KEYS[1], KEYS[2], KEYS[3]
            local e = redis.call('HGET', meta, 'e')
            if ARGV[7] ~= '' then
              local r = redis.call('HMGET', result, 'e', 's')
              if r[1] and r[1] == e then
                return {r[1], r[2], 0, 0}
              end
            end
            local s = tonumber(redis.call('HGET', meta, 's') or '0')
            if (not e) or (e == ARGV[5] and s < tonumber(ARGV[6])) then
              e = ARGV[4]
              redis.call('DEL', stream)
              redis.call('HSET', meta, 'e', e, 's', 0)
            end
            s = redis.call('HINCRBY', meta, 's', 1)
            local t = redis.call('TIME')
            local ts = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
            redis.call('XADD', stream, 'MAXLEN', '~', ARGV[2], s .. '-0', 't', ts, 'd', ARGV[1])
            local age = tonumber(ARGV[3])
            if age > 0 then
              -- retention by age, a bounded step per publish: MINID of the first entry young enough
              local cutoff = tonumber(ts) - age
              local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 32)
              local keep = nil
              for _, entry in ipairs(first) do
                if tonumber(entry[2][2]) >= cutoff then
                  keep = entry[1]
                  break
                end
              end
              if keep == nil and #first > 0 then
                local last = first[#first][1]
                keep = (tonumber(string.match(last, '^(%d+)')) + 1) .. '-0'
              end
              if keep then
                redis.call('XTRIM', stream, 'MINID', keep)
              end
            end
            if ARGV[7] ~= '' then
              redis.call('HSET', result, 'e', e, 's', s)
              redis.call('PEXPIRE', result, ARGV[7])
            end
            redis.call(ARGV[9], ARGV[8], e .. ' ' .. s .. ' ' .. ts .. ' ' .. ARGV[1])
            return {e, tostring(s), 1, tonumber(ts)}
            """;
}
