package io.pushd.loadtest.bench;

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
 * bench with a 1 s publish phase and a fill to 60,000 events (more than the publish phase stores,
 * so the fill runs and is measured): all three figures measured and checked.
 */
class BenchCommandTest {

    @TempDir
    Path reportDir;

    @Test
    @Timeout(170)
    void publishReplayAndStartupFiguresAreMeasured() throws Exception {
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        int exit = LoadTestMain.execute("bench", "--server-jar", serverJar,
                "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                "--publishers", "4", "--duration", "1s",
                "--warmup", "200ms", "--topics", "3", "--replay-events", "2000", "--fill", "60000", "--fill-topics", "100",
                "--fill-publishers", "8", "--server-set", "drain.lbGrace=100ms",
                // 150 s, not 80: under CI load (the other fork running a cluster) the fill took 60 s and
                // the start on its 60,000 events 23 s, where alone they take about 10 s and 5 s
                "--timeout", "150s",
                "--report-dir", reportDir.toString());

        JsonNode report = new ObjectMapper().readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        assertThat(exit).as(report.toPrettyString()).isZero();
        JsonNode publish = report.get("publish");
        assertThat(publish.get("acknowledgedPerSecond").asDouble()).isPositive();
        assertThat(publish.get("ackLatencyP99Ms").asDouble()).isGreaterThanOrEqualTo(publish.get("ackLatencyP50Ms").asDouble());
        JsonNode replay = report.get("replay");
        assertThat(replay.get("complete").asBoolean()).isTrue();
        assertThat(replay.get("received").asLong()).isEqualTo(replay.get("keptEvents").asLong()).isPositive();
        JsonNode startup = report.get("startup");
        assertThat(startup.get("recoveredEvents").asLong()).isGreaterThanOrEqualTo(5000);
        assertThat(startup.get("recoveredInMs").asLong()).isNotNegative();
        assertThat(startup.get("processStartToReadyMs").asDouble()).isPositive();
        assertThat(report.get("fill").get("events").asLong()).isPositive();
    }
}
