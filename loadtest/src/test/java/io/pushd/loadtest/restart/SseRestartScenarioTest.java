package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.report.ReportWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RestartScenarioTest} with server-sent event clients ({@code --transport sse}): 300
 * {@code GET /v1/sse} streams through a graceful and a crash restart of the real fat jar; the
 * same spread and exactly-once checks. {@code -Dpush.sse.server.jar=PATH} names another jar to use.
 */
class SseRestartScenarioTest {

    /**
     * 300, not 1,000: the WebSocket run (RestartScenarioTest) already holds 1,000 clients, and both at 1,000 would
     * take mvn verify past its 10 minutes on 2 cores; the 1,000-client SSE figures are in the closing note
     * (restart --transport sse --mode both).
     */
    private static final int CLIENTS = 300;

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path reportDir;

    @Test
    @Timeout(300)
    void sseClientsSurviveAGracefulAndACrashRestartWithSpreadReconnectsAndEveryEventExactlyOnce()
            throws Exception {
        String serverJar = System.getProperty("push.sse.server.jar",
                System.getProperty("push.server.jar", "../server/target/push-server.jar"));
        assertThat(Path.of(serverJar)).as("server fat jar (built by the server module)").isRegularFile();

        int exit = LoadTestMain.execute("restart",
                "--transport", "sse",
                "--server-jar", serverJar,
                "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                "--clients", Integer.toString(CLIENTS),
                "--topics", "10",
                "--mode", "both",
                "--rate", "60",
                "--client-threads", "2",
                "--steady", "2s",
                "--timeout", "260s", // each restart may wait up to --reconnect-timeout (120 s) past its server's start
                "--report-dir", reportDir.toString());

        JsonNode report = JSON.readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        String summary = report.toPrettyString();
        // the checks first: each names what failed (e.g. a restart cut short by --timeout)
        for (JsonNode check : report.get("checks")) {
            assertThat(check.get("passed").asBoolean()).as("%s: %s", check.get("name"), check.get("detail")).isTrue();
        }
        assertThat(report.path("settings").path("transport").asText()).as(summary).isEqualTo("sse");
        JsonNode restarts = report.get("restarts");
        assertThat(restarts).as(summary).hasSize(2);
        assertThat(restarts.get(0).get("mode").asText()).isEqualTo("graceful");
        assertThat(restarts.get(1).get("mode").asText()).isEqualTo("crash");
        for (JsonNode r : restarts) {
            assertThat(r.get("reconnected").asInt()).as("reconnected, %s", r).isEqualTo(CLIENTS);
            assertThat(r.get("spreadMs").asDouble()).as("first-to-last reconnect, %s", r).isGreaterThanOrEqualTo(5_000);
            assertThat(r.get("maxShareInAnySecond").asDouble()).as("largest share in 1 s, %s", r).isLessThanOrEqualTo(0.30);
        }
        JsonNode deliveries = report.get("deliveries");
        assertThat(deliveries.get("clientsWrong").asInt()).as(summary).isZero();
        assertThat(deliveries.get("gaps").asLong() + deliveries.get("resets").asLong()
                + deliveries.get("duplicatesDropped").asLong()).as(summary).isZero();
        assertThat(deliveries.get("total").asLong()).as("events were delivered at all").isPositive();
        assertThat(exit).isZero();
    }
}
