package io.pushd.server.admission;

/** A token bucket refilled continuously at {@code ratePerSecond}, holding at most {@code capacity} tokens. */
public final class TokenBucket {

    private final double ratePerNano;
    private final double capacity;
    private double tokens;
    private long lastNanos;

    /** A bucket that holds one second's worth and starts full. */
    public TokenBucket(int ratePerSecond, long nowNanos) {
        this(ratePerSecond, ratePerSecond, nowNanos);
    }

    /** Starts full. */
    public TokenBucket(double ratePerSecond, double capacity, long nowNanos) {
        this.ratePerNano = ratePerSecond / 1e9;
        this.capacity = capacity;
        this.tokens = capacity;
        this.lastNanos = nowNanos;
    }

    /** Takes one token if there is one. Not thread-safe: guard it or confine it to one thread. */
    public boolean tryAcquire(long nowNanos) {
        tokens = Math.min(capacity, tokens + (nowNanos - lastNanos) * ratePerNano);
        lastNanos = nowNanos;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** How far below empty the bucket would be after this request, in seconds of refill (0 when a token is there). */
    public double deficitSeconds() {
        return tokens >= 1 ? 0 : (1 - tokens) / (ratePerNano * 1e9);
    }
}
