package io.pushd.client;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/** Full-jitter exponential backoff that honours the server's hint; see {@link Backoff#exponential}. */
final class ExponentialBackoff implements Backoff {

    private final long baseMillis;
    private final long maxMillis;
    private final long maxHintMillis;
    private final Random random;

    ExponentialBackoff(Duration baseDelay, Duration maxDelay, Duration maxHint, Random random) {
        this.baseMillis = PushClientOptions.requirePositive("baseDelay", baseDelay).toMillis();
        this.maxMillis = PushClientOptions.requirePositive("maxDelay", maxDelay).toMillis();
        this.maxHintMillis = PushClientOptions.requirePositive("maxHint", maxHint).toMillis();
        if (maxMillis < baseMillis) {
            throw new IllegalArgumentException("maxDelay: " + maxDelay + " (expected: >= baseDelay " + baseDelay + ")");
        }
        this.random = random;
    }

    @Override
    public Duration nextDelay(int attempt, OptionalLong hintMillis) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt: " + attempt + " (expected: >= 0)");
        }
        if (hintMillis.isPresent()) {
            // The server spread its clients over a window on purpose: come back when it said. The
            // cap only guards against a nonsensical reason.
            return Duration.ofMillis(Math.max(0, Math.min(hintMillis.getAsLong(), maxHintMillis)));
        }
        return Duration.ofMillis(rng().nextLong(cap(attempt) + 1));
    }

    /** {@code min(max, base * 2^attempt)} without overflowing for large attempts. */
    long cap(int attempt) {
        if (attempt >= 62 || baseMillis > (maxMillis >> Math.min(attempt, 62))) {
            return maxMillis;
        }
        return Math.min(maxMillis, baseMillis << attempt);
    }

    private RandomGenerator rng() {
        return random != null ? random : ThreadLocalRandom.current();
    }

    @Override
    public String toString() {
        return "ExponentialBackoff[base=" + baseMillis + "ms, max=" + maxMillis + "ms, maxHint=" + maxHintMillis + "ms]";
    }
}
