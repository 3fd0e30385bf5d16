package io.pushd.loadtest.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.report.ReportWriter;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.server.ManagedServer;
import io.pushd.loadtest.server.ProcessCpu;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** publish through two running servers at once: each node's acknowledged events, the sum, and a server's CPU per event. */
class PublishCommandTest {

    @TempDir
    Path dir;
    ManagedServer a;
    ManagedServer b;

    /** Two servers, for the test that publishes (the usage errors need none: they are refused before any connection). */
    private void startTwo() throws Exception {
        Path jar = Path.of(System.getProperty("push.server.jar", "../server/target/push-server.jar"));
        Deadline deadline = Deadline.in(Duration.ofSeconds(30));
        // the warm-ups are not what this tests (5-7 s a start)
        List<String> sets = List.of("fanout.warmup=false", "store.replayWarmup=false");
        a = ManagedServer.start(jar, dir.resolve("a"), dir.resolve("logs-a"), sets, deadline);
        b = ManagedServer.start(jar, dir.resolve("b"), dir.resolve("logs-b"), sets, deadline);
    }

    @AfterEach
    void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    /** {@code push_events_published_total} of {@code s}: what the server itself appended. */
    private static double published(ManagedServer s) throws Exception {
        String scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://" + s.host() + ":" + s.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^push_events_published_total (\\S+)").matcher(scrape);
        assertThat(m.find()).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    @Timeout(60)
    void twoNodesArePublishedToAtOnceAndEachNodesShareIsReported() throws Exception {
        startTwo();
        Path reportDir = dir.resolve("report");
        long serverA = ProcessCpu.childServerPid(a).getAsLong();
        int exit = LoadTestMain.execute("publish", "--url", "http://" + a.host() + ":" + a.port(),
                "--url", "http://" + b.host() + ":" + b.port(), "--topics", "5", "--connections", "2", "--depth", "8",
                "--warmup", "300ms", "--duration", "1s", "--cpu-pid", Long.toString(serverA), "--timeout", "40s",
                "--report-dir", reportDir.toString());

        JsonNode report = new ObjectMapper().readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        assertThat(exit).as(report.toPrettyString()).isZero();
        JsonNode nodes = report.get("nodes");
        assertThat(nodes).hasSize(2);
        long sum = 0;
        for (JsonNode n : nodes) {
            assertThat(n.get("acknowledged").asLong()).isPositive();
            sum += n.get("acknowledged").asLong();
        }
        JsonNode publish = report.get("publish");
        assertThat(publish.get("acknowledged").asLong()).isEqualTo(sum);
        assertThat(publish.get("eventsPerSecond").asDouble()).isPositive();
        assertThat(publish.get("cpu").get(0).get("microsPerEvent").asDouble()).isPositive();
        // what was counted as acknowledged was appended by the servers (they also saw the warm-up)
        assertThat(published(a)).isGreaterThanOrEqualTo(nodes.get(0).get("acknowledged").asDouble());
        assertThat(published(b)).isGreaterThanOrEqualTo(nodes.get(1).get("acknowledged").asDouble());
    }

    @Test
    void aUrlOffLoopbackIsAUsageError() {
        assertThat(LoadTestMain.execute("publish", "--url", "http://192.0.2.1:8080", "--duration", "1s"))
                .isEqualTo(2);
    }

    @Test
    void aDepthBeyondTheServersQueueIsAUsageError() {
        assertThat(LoadTestMain.execute("publish", "--url", "http://127.0.0.1:1", "--depth", "300")).isEqualTo(2);
    }
}
