package io.pushd.loadtest;

import java.time.Duration;

/**
 * The hard overall time bound of a run ({@code --timeout}). Every wait of a scenario takes the
 * smaller of its own bound and what is left here, so a run can never hang: when the time is up,
 * {@link #check(String)} throws and the scenario still writes its report (marked failed).
 */
public final class Deadline {

    private final long endNanos;
    private final Duration total;

    private Deadline(Duration total) {
        this.total = total;
        this.endNanos = System.nanoTime() + total.toNanos();
    }

    public static Deadline in(Duration total) {
        return new Deadline(total);
    }

    public Duration total() {
        return total;
    }

    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, endNanos - System.nanoTime()));
    }

    public boolean expired() {
        return System.nanoTime() - endNanos >= 0;
    }

    /** The smaller of {@code bound} and the time left. */
    public Duration cap(Duration bound) {
        Duration left = remaining();
        return bound.compareTo(left) < 0 ? bound : left;
    }

    /** Throws {@link Expired} once the time is up; {@code doing} names the step for the report. */
    public void check(String doing) {
        if (expired()) {
            throw new Expired("overall timeout of " + total.toSeconds() + " s reached while " + doing);
        }
    }

    /** Sleeps {@code d}, or what is left if less, then {@link #check(String) checks} the time ("running"). */
    public void sleep(Duration d) throws InterruptedException {
        Thread.sleep(cap(d).toMillis());
        check("running");
    }

    /** The run ran out of time. */
    public static final class Expired extends RuntimeException {
        public Expired(String message) {
            super(message);
        }
    }
}
