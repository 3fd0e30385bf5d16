package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.report.ReportWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The restart scenario with signed tokens (issue 12): the child server runs auth.mode jwt with a
 * key generated for the run, every client and the publisher carry tokens, and the promise holds as
 * without them. No token reaches the summary, the logs of this run, the report or the server logs.
 */
class RestartWithTokensTest {

    /** A compact JWS: base64url of a JSON header and payload, both starting with '{"' = "eyJ". */
    private static final Pattern JWT = Pattern.compile("eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}");

    @TempDir
    Path reportDir;

    @Test
    @Timeout(120)
    void aGracefulRestartOfHundredClientsWithHs256TokensKeepsEveryPromiseAndPrintsNoToken() throws Exception {
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = System.out;
        PrintStream err = System.err;
        int exit;
        try (PrintStream both = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
            System.setOut(both);
            System.setErr(both);
            exit = LoadTestMain.execute("restart", "--token", "hs256", "--server-jar", serverJar,
                    "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                    "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                    "--clients", "100", "--topics", "4", "--rate", "40", "--steady", "1s", "--client-threads", "1",
                    // hints spread past the restart time, so 100 clients stay under 30 % in any second
                    "--server-set", "drain.lbGrace=200ms", "--server-set", "drain.minWindow=12s",
                    "--timeout", "100s", "--report-dir", reportDir.toString());
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        String printed = captured.toString(StandardCharsets.UTF_8);
        out.print(printed);

        JsonNode report = new ObjectMapper().readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        assertThat(exit).as(printed).isZero();
        assertThat(report.get("settings").get("tokenMode").asText()).isEqualTo("hs256");
        assertThat(report.get("settings").get("token").asText()).startsWith("hs256: HS256");
        assertThat(printed).contains("tokens: hs256", "PASSED");
        JsonNode r = report.get("restarts").get(0);
        assertThat(r.get("reconnected").asInt()).isEqualTo(100);
        assertThat(r.get("spreadMs").asDouble()).isGreaterThanOrEqualTo(5_000);
        assertThat(r.get("maxShareInAnySecond").asDouble()).isLessThanOrEqualTo(0.30);
        assertThat(report.get("deliveries").get("clientsWrong").asInt()).isZero();
        assertThat(report.get("deliveries").get("total").asLong()).isPositive();

        // The server really ran with tokens: its logged configuration says so.
        String serverLog = Files.readString(reportDir.resolve("server-1.log"));
        assertThat(serverLog).containsPattern("mode: \"?jwt");

        assertThat(JWT.matcher(printed).find()).as("a token in the summary or this run's logs").isFalse();
        List<Path> files;
        try (Stream<Path> s = Files.walk(reportDir)) {
            files = s.filter(Files::isRegularFile).toList();
        }
        assertThat(files).extracting(p -> p.getFileName().toString())
                .contains(ReportWriter.JSON_FILE, ReportWriter.HTML_FILE, "server-1.log", "server-2.log");
        for (Path f : files) {
            String text = Files.readString(f, StandardCharsets.UTF_8);
            assertThat(JWT.matcher(text).find()).as("a token in %s", f.getFileName()).isFalse();
            assertThat(text).as("key material in %s", f.getFileName()).doesNotContain("\"kty\"");
        }
    }

    @Test
    void tokensWithAnExternalServerAreAUsageError() {
        int exit = LoadTestMain.execute("restart", "--token", "rs256", "--url", "http://127.0.0.1:9",
                "--restart-command", "true", "--report-dir", reportDir.toString());
        assertThat(exit).isEqualTo(2);
    }
}
