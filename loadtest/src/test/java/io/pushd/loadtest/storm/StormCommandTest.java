package io.pushd.loadtest.storm;

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

/** storm with 100 clients (drain window above the restart time, so phase 2 clients find the new server at once): both phases complete, nothing lost, both phases charted. */
class StormCommandTest {

    @TempDir
    Path reportDir;

    @Test
    @Timeout(120)
    void bothPhasesCompleteWithoutLosingAnEvent() throws Exception {
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        int exit = LoadTestMain.execute("storm", "--server-jar", serverJar, "--clients", "100", "--topics", "4",
                "--rate", "40", "--steady", "1s", "--storm-delay", "200ms", "--handshake-limit", "100",
                "--client-threads", "1",
                "--server-set", "drain.lbGrace=200ms", "--server-set", "drain.minWindow=8s",
                "--timeout", "110s", "--report-dir", reportDir.toString());

        JsonNode report = new ObjectMapper().readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        assertThat(exit).as(report.toPrettyString()).isZero();
        for (String phase : new String[] {"noJitter", "jitter"}) {
            JsonNode p = report.get("phases").get(phase);
            assertThat(p.get("completed").asBoolean()).as(phase).isTrue();
            assertThat(p.get("back").asInt()).as(phase).isEqualTo(100);
            assertThat(p.get("peakHandshakesPerSecond").asInt()).as(phase).isPositive();
            assertThat(p.has("closes1013")).isTrue();
            assertThat(p.get("caughtUpMs").asDouble()).as(phase).isPositive();
        }
        assertThat(report.get("settings").get("serverSets").toString()).contains("limits.maxHandshakesPerSecond=100");
        assertThat(report.get("deliveries").get("clientsWrong").asInt()).isZero();
        assertThat(report.get("charts").size()).isEqualTo(4);
        assertThat(Files.readString(reportDir.resolve(ReportWriter.HTML_FILE))).contains("<svg", "Phase 1", "Phase 2");
    }
}
