package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.report.ReportWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The promise exactly as stated: "restart the server with 1,000 clients connected; their
 * reconnects spread over at least 5 seconds; each client then holds every event exactly once".
 * One graceful (SIGTERM) and one crash (SIGKILL) restart of the real fat jar as a child process;
 * the scenario itself runs in this JVM, through the command line.
 */
class RestartScenarioTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path reportDir;

    @Test
    @Timeout(300)
    void thousandClientsSurviveAGracefulAndACrashRestartWithSpreadReconnectsAndEveryEventExactlyOnce() throws Exception {
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        assertThat(Path.of(serverJar)).as("server fat jar (built by the server module)").isRegularFile();

        int exit = LoadTestMain.execute("restart",
                "--server-jar", serverJar,
                "--clients", "1000",
                "--topics", "10",
                "--mode", "both",
                "--rate", "60",
                "--client-threads", "2",
                "--steady", "2s",
                "--timeout", "260s", // each restart may wait up to --reconnect-timeout (120 s) past its server's start
                "--report-dir", reportDir.toString());

        Path json = reportDir.resolve(ReportWriter.JSON_FILE);
        Path html = reportDir.resolve(ReportWriter.HTML_FILE);
        assertThat(json).isRegularFile();
        assertThat(html).isRegularFile();
        JsonNode report = JSON.readTree(json.toFile());
        String summary = report.toPrettyString();

        JsonNode restarts = report.get("restarts");
        assertThat(restarts).as(summary).hasSize(2);
        assertThat(restarts.get(0).get("mode").asText()).isEqualTo("graceful");
        assertThat(restarts.get(1).get("mode").asText()).isEqualTo("crash");
        for (JsonNode r : restarts) {
            assertThat(r.get("reconnected").asInt()).as("reconnected, %s", r).isEqualTo(1000);
            assertThat(r.get("spreadMs").asDouble()).as("first-to-last reconnect, %s", r).isGreaterThanOrEqualTo(5_000);
            assertThat(r.get("maxShareInAnySecond").asDouble()).as("largest share in 1 s, %s", r).isLessThanOrEqualTo(0.30);
        }
        JsonNode deliveries = report.get("deliveries");
        assertThat(deliveries.get("clientsWrong").asInt()).as(summary).isZero();
        assertThat(deliveries.get("gaps").asLong() + deliveries.get("resets").asLong()
                + deliveries.get("duplicatesDropped").asLong()).as(summary).isZero();
        assertThat(deliveries.get("total").asLong()).as("events were delivered at all").isPositive();
        for (JsonNode check : report.get("checks")) {
            assertThat(check.get("passed").asBoolean()).as("%s: %s", check.get("name"), check.get("detail")).isTrue();
        }
        assertThat(report.get("passed").asBoolean()).isTrue();
        assertThat(exit).isZero();

        String page = Files.readString(html);
        assertThat(page).contains("<svg", "Checks", "restart 2 (crash)")
                .doesNotContain("<script", "<link", "src=\"http");
    }
}
