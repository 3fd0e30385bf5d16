package io.pushd.loadtest.server;

import io.pushd.loadtest.Deadline;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls {@code /readyz} until the server accepts work. */
final class Probe {

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofMillis(500))
            .build();

    private Probe() {
    }

    /**
     * Waits until {@code GET /readyz} answers 200 (not just {@code /healthz}: a starting or
     * draining server is up but refuses clients).
     *
     * @param alive false aborts early (the process died)
     * @return {@link System#nanoTime()} of the first 200
     */
    static long awaitReady(URI base, Duration timeout, Deadline deadline, BooleanSupplier alive, String what)
            throws InterruptedException {
        long end = System.nanoTime() + deadline.cap(timeout).toNanos();
        HttpRequest req = HttpRequest.newBuilder(base.resolve("/readyz")).timeout(Duration.ofSeconds(1)).GET().build();
        while (System.nanoTime() - end < 0) {
            if (!alive.getAsBoolean()) {
                throw new IllegalStateException(what + " exited before it was ready");
            }
            try {
                if (HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return System.nanoTime();
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(50);
        }
        deadline.check("waiting for " + what + " to become ready");
        throw new IllegalStateException(what + " not ready within " + timeout.toSeconds() + " s (" + base + "/readyz)");
    }
}
