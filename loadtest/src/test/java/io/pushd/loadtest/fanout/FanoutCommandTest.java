package io.pushd.loadtest.fanout;

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

/** fanout with 50 subscribers for 3 s against the real server jar: exactly once, figures in report.json. */
class FanoutCommandTest {

    @TempDir
    Path reportDir;

    @Test
    @Timeout(60)
    void fiftySubscribersGetEveryEventOnceAndTheFiguresAreReported() throws Exception {
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        int exit = LoadTestMain.execute("fanout", "--server-jar", serverJar,
                "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                "--subscribers", "50", "--topics", "2",
                "--rate", "50", "--warmup", "1s", "--duration", "3s", "--client-threads", "1", "--timeout", "50s",
                "--report-dir", reportDir.toString());

        JsonNode report = new ObjectMapper().readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        assertThat(exit).as(report.toPrettyString()).isZero();
        assertThat(report.get("passed").asBoolean()).isTrue();
        JsonNode f = report.get("fanout");
        assertThat(f.get("deliveriesPerSecond").asDouble()).isPositive();
        assertThat(f.get("serverCpuPercentOfOneCore").asDouble()).isPositive();
        JsonNode lat = f.get("latencyMs");
        // every percentile reported, each at least the one before
        double previous = 0;
        for (String p : new String[] {"p50", "p90", "p99", "p999", "max"}) {
            assertThat(lat.get(p)).as(p).isNotNull();
            assertThat(lat.get(p).asDouble()).as(p).isGreaterThanOrEqualTo(previous);
            previous = lat.get(p).asDouble();
        }
        assertThat(lat.get("count").asLong()).isPositive();
        assertThat(lat.get("max").asDouble()).isGreaterThanOrEqualTo(lat.get("p50").asDouble());
        assertThat(report.get("deliveries").get("clientsWrong").asInt()).isZero();
        assertThat(Files.readString(reportDir.resolve(ReportWriter.HTML_FILE))).contains("Fan-out figures");
    }

    @Test
    void aServerSettingWithoutKeyEqualsValueIsAUsageError() {
        assertThat(LoadTestMain.execute("fanout", "--subscribers", "5", "--server-set", "noequals")).isEqualTo(2);
    }

    @Test
    void subscribersAndClientsAreOneSetting() {
        assertThat(LoadTestMain.execute("fanout", "--subscribers", "5", "--clients", "5")).isEqualTo(2);
    }
}
