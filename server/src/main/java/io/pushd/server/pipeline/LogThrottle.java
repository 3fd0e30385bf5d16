package io.pushd.server.pipeline;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * At most one log line per interval for an event that can come in floods (accept failures,
 * refused connections): the line carries how many happened since the previous one. Thread-safe.
 */
final class LogThrottle {

    private final long intervalNanos;
    private final AtomicLong count = new AtomicLong();
    private final AtomicLong nextNanos;

    LogThrottle(long interval, TimeUnit unit, long nowNanos) {
        this.intervalNanos = unit.toNanos(interval);
        this.nextNanos = new AtomicLong(nowNanos);
    }

    /**
     * Counts one event; returns how many to report (this one included) when a line is due now,
     * else 0.
     */
    long record(long nowNanos) {
        count.incrementAndGet();
        long next = nextNanos.get();
        if (nowNanos - next >= 0 && nextNanos.compareAndSet(next, nowNanos + intervalNanos)) {
            return count.getAndSet(0);
        }
        return 0;
    }
}
