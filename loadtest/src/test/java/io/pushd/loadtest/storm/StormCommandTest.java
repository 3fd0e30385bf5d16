package io.pushd.loadtest.storm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.report.ReportWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
        int exit = LoadTestMain.execute("storm", "--server-jar", serverJar,
                "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                "--clients", "100", "--topics", "4",
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
            // the 1013 figure, the close codes and the 1013 chart count the same closes
            assertThat(p.get("closes1013").asInt()).as(phase).isEqualTo(closes(p.get("closeCodes").asText(), 1013))
                    .isEqualTo(chartTotal(report, "Phase " + (phase.equals("noJitter") ? "1" : "2") + ": 1013 closes"));
            assertThat(p.get("caughtUpMs").asDouble()).as(phase).isPositive();
        }
        assertThat(report.get("settings").get("serverSets").toString()).contains("limits.maxHandshakesPerSecond=100");
        assertThat(report.get("deliveries").get("clientsWrong").asInt()).isZero();
        assertThat(report.get("charts").size()).isEqualTo(4);
        assertThat(Files.readString(reportDir.resolve(ReportWriter.HTML_FILE))).contains("<svg", "Phase 1", "Phase 2");
    }

    /** How many closes with {@code code} a close-code map such as "{1006=100, 1013=7}" holds. */
    private static int closes(String codes, int code) {
        Matcher m = Pattern.compile("\\b" + code + "=(\\d+)").matcher(codes);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private static int chartTotal(JsonNode report, String titlePrefix) {
        for (JsonNode c : report.get("charts")) {
            if (c.get("title").asText().startsWith(titlePrefix)) {
                int sum = 0;
                for (JsonNode n : c.get("counts")) {
                    sum += n.asInt();
                }
                return sum;
            }
        }
        throw new AssertionError("no chart " + titlePrefix);
    }
}
