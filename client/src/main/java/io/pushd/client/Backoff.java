package io.pushd.client;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * How long a client waits before its next connection attempt. A strategy so that it can be
 * tested without a network and replaced (or wrapped to record its decisions) in a load test.
 *
 * <p>Called on the client's event loop; an implementation shared by many clients must be
 * thread-safe.
 */
@FunctionalInterface
public interface Backoff {

    /**
     * @param attempt    failed attempts since the last healthy connection: 0 for the first delay
     *                   after a healthy connection closed, 1 after the next attempt failed, ...
     * @param hintMillis the server's suggestion ({@code retryMs} of a 1012/1013 close), if any
     * @return the delay before the next attempt, never negative
     */
    Duration nextDelay(int attempt, OptionalLong hintMillis);

    /**
     * The protocol's recommendation: the hint when the server gave one (at most {@code maxHint}),
     * otherwise uniformly random in {@code [0, min(maxDelay, baseDelay * 2^attempt)]} (full
     * jitter, so a crowd of clients spreads out instead of coming back together).
     *
     * @param random the source of jitter; {@code null} uses {@link java.util.concurrent.ThreadLocalRandom}
     */
    static Backoff exponential(Duration baseDelay, Duration maxDelay, Duration maxHint, java.util.Random random) {
        return new ExponentialBackoff(baseDelay, maxDelay, maxHint, random);
    }
}
