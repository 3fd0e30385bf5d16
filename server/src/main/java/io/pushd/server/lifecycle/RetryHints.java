package io.pushd.server.lifecycle;

import io.pushd.server.config.ServerConfig;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one policy for the {@code retryMs} hint a client gets when it is sent away (drain, an
 * upgrade during the drain, admission refusals, the start-up ramp, slow consumers). A hint is
 * drawn at random within a window so that clients sent away together come back spread out; the
 * window grows with the number of clients (drain, ramp) or with the overload (admission).
 * Thread-safe and stateless apart from the configuration.
 */
public final class RetryHints {

    /** The largest overload hint, whatever the overload. */
    static final long MAX_OVERLOAD_MILLIS = 60_000;
    /** The smallest overload window: below a second a refused client would come straight back. */
    static final long MIN_OVERLOAD_WINDOW_MILLIS = 1_000;

    /** The smallest SSE {@code retry:}: a stream cut by the network must not reconnect in a tight loop. */
    public static final long MIN_STREAM_RETRY_MILLIS = 1_000;

    private final long minWindowMillis;
    private final int targetRate;

    /**
     * @param minWindow  {@code drain.minWindow}: the shortest window clients are spread over
     * @param targetRate {@code reconnect.targetRate}: returning clients per second the fleet can take
     */
    public RetryHints(Duration minWindow, int targetRate) {
        if (minWindow.isNegative()) {
            throw new IllegalArgumentException("minWindow: " + minWindow + " (expected: >= 0)");
        }
        if (targetRate < 1) {
            throw new IllegalArgumentException("targetRate: " + targetRate + " (expected: >= 1)");
        }
        this.minWindowMillis = minWindow.toMillis();
        this.targetRate = targetRate;
    }

    public static RetryHints of(ServerConfig config) {
        return new RetryHints(config.drain().minWindow(), config.reconnect().targetRate());
    }

    /** {@code max(drain.minWindow, clients / reconnect.targetRate)}: how long {@code clients} need to return. */
    public long windowMillis(int clients) {
        return Math.max(minWindowMillis, clients * 1000L / targetRate);
    }

    /** A hint uniform in {@code [0, windowMillis]}. */
    public long within(long windowMillis) {
        return ThreadLocalRandom.current().nextLong(windowMillis + 1);
    }

    /** A hint for one client sent away on its own (a slow consumer, an upgrade during the drain). */
    public long single() {
        return within(minWindowMillis);
    }

    /**
     * An SSE stream's first {@code retry:}, uniform in {@code [1 s, max(1 s, drain.minWindow)]}:
     * what a plain EventSource waits after any end we did not announce (a crash, a cut network),
     * so streams that end together come back spread out like the 1012 hints.
     */
    public long streamRetry() {
        long window = Math.max(0, minWindowMillis - MIN_STREAM_RETRY_MILLIS);
        return MIN_STREAM_RETRY_MILLIS + ThreadLocalRandom.current().nextLong(window + 1);
    }

    /**
     * A hint for a client refused under overload: uniform in {@code [w/2, w]} with
     * {@code w = max(1 s, drain.minWindow) × loadFactor}, capped at a minute, so the worse the
     * overload the later (and more spread out) refused clients return.
     */
    public long overload(double loadFactor) {
        long base = Math.max(MIN_OVERLOAD_WINDOW_MILLIS, minWindowMillis);
        long window = (long) Math.min(MAX_OVERLOAD_MILLIS, base * Math.max(1.0, loadFactor));
        return window / 2 + ThreadLocalRandom.current().nextLong(window / 2 + 1);
    }
}
