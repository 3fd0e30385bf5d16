package io.pushd.loadtest.server;

/**
 * When the steps of one restart happened, as {@link System#nanoTime()} values (so they compare
 * directly with the clients' {@code onConnected} times).
 *
 * @param triggeredNanos the signal was sent (or the restart command started)
 * @param stoppedNanos   the old process was gone, or -1 when not observable (external server)
 * @param readyNanos     the new server answered {@code /readyz} with 200
 * @param exitCode       the old process's exit code, or -1 when not observable
 */
public record RestartTiming(RestartMode mode, long triggeredNanos, long stoppedNanos, long readyNanos, int exitCode) {

    public double stoppedAfterMs() {
        return stoppedNanos < 0 ? -1 : (stoppedNanos - triggeredNanos) / 1e6;
    }

    public double readyAfterMs() {
        return (readyNanos - triggeredNanos) / 1e6;
    }
}
