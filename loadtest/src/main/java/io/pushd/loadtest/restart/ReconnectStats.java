package io.pushd.loadtest.restart;

import io.pushd.loadtest.fleet.ClientRecord;
import java.util.Arrays;
import org.HdrHistogram.Histogram;

/**
 * How the clients came back after one restart: each client's first completed handshake after the
 * trigger, as milliseconds since the trigger.
 *
 * @param clients         clients that were connected before the restart
 * @param reconnected     clients with a handshake after the trigger
 * @param firstMs         earliest reconnect
 * @param lastMs          latest reconnect
 * @param p50Ms           median reconnect time
 * @param p99Ms           99th percentile
 * @param maxInAnySecond  most reconnects inside any 1 s window (sliding, so stricter than fixed bins)
 * @param maxWindowFromMs start of that window
 * @param bins100ms       reconnects per 100 ms since the trigger, for the chart
 */
record ReconnectStats(int clients, int reconnected, double firstMs, double lastMs, double p50Ms, double p99Ms,
                      int maxInAnySecond, double maxWindowFromMs, int[] bins100ms) {

    static final int BIN_MS = 100;

    /** @param firstConnectNanos per client the first handshake after the trigger, or {@link ClientRecord#NONE} */
    static ReconnectStats of(long triggerNanos, long[] firstConnectNanos) {
        int clients = firstConnectNanos.length;
        long[] offsets = Arrays.stream(firstConnectNanos).filter(t -> t != ClientRecord.NONE)
                .map(t -> t - triggerNanos)
                .sorted()
                .toArray();
        int n = offsets.length;
        if (n == 0) {
            return new ReconnectStats(clients, 0, -1, -1, -1, -1, 0, -1, new int[0]);
        }
        Histogram h = new Histogram(3);
        for (long o : offsets) {
            h.recordValue(Math.max(0, o / 1_000)); // microseconds
        }
        int best = 0;
        long bestFrom = offsets[0];
        for (int i = 0, j = 0; i < n; i++) {
            while (j < n && offsets[j] - offsets[i] < 1_000_000_000L) {
                j++;
            }
            if (j - i > best) {
                best = j - i;
                bestFrom = offsets[i];
            }
        }
        int[] bins = new int[(int) (offsets[n - 1] / 1_000_000 / BIN_MS) + 1];
        for (long o : offsets) {
            bins[(int) (o / 1_000_000 / BIN_MS)]++;
        }
        return new ReconnectStats(clients, n, offsets[0] / 1e6, offsets[n - 1] / 1e6,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, best, bestFrom / 1e6, bins);
    }

    double spreadMs() {
        return reconnected == 0 ? 0 : lastMs - firstMs;
    }

    /** Largest share of all clients reconnecting within one second, 0..1. */
    double maxShare() {
        return clients == 0 ? 0 : (double) maxInAnySecond / clients;
    }
}
