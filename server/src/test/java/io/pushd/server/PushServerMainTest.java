package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ConfigLoader;
import io.pushd.server.config.ServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class PushServerMainTest {

    static final Path SHIPPED = Path.of("..", "config", "server.yaml");

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private PrintStream savedOut;
    private PrintStream savedErr;

    @BeforeEach
    void captureOutput() {
        savedOut = System.out;
        savedErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreOutput() {
        System.setOut(savedOut);
        System.setErr(savedErr);
    }

    private static int run(String... args) {
        return new CommandLine(new PushServerMain()).execute(args);
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void invalidConfigFileExitsWithCodeTwoAndNamesTheKey() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "server:\n  port: 70000\n");

        int code = run("--config", bad.toString());

        assertThat(code).isEqualTo(2);
        assertThat(stderr()).contains("configuration error").contains("server.port");
    }

    @Test
    void unknownKeyInConfigFileExitsWithCodeTwo() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "bogus: 1\n");

        assertThat(run("--config", bad.toString(), "--print-config")).isEqualTo(2);
        assertThat(stdout()).isEmpty();
    }

    @Test
    void missingConfigFileExitsWithCodeTwo() {
        assertThat(run("--config", dir.resolve("absent.yaml").toString())).isEqualTo(2);
        assertThat(stderr()).contains("absent.yaml").contains("not found");
    }

    @Test
    void badSetOverrideExitsWithCodeTwo() {
        assertThat(run("--config", SHIPPED.toString(), "--set", "store.fsync=maybe")).isEqualTo(2);
        assertThat(stderr()).contains("store.fsync");
    }

    @Test
    void aBracketedOriginThatIsNotAListExitsWithCodeTwo() {
        assertThat(run("--config", SHIPPED.toString(), "--set", "security.allowedOrigins=[https://a.example",
                "--print-config")).isEqualTo(2);
        assertThat(stderr()).contains("security.allowedOrigins: [https://a.example (expected: ");
        assertThat(stdout()).isEmpty();
    }

    @Test
    void aFlowListOfOriginsIsReadAsAList() throws Exception {
        int code = run("--config", SHIPPED.toString(), "--set", "security.allowedOrigins=[https://a.example]",
                "--print-config");

        assertThat(code).as(stderr()).isEqualTo(0);
        Path printed = dir.resolve("printed.yaml");
        Files.writeString(printed, stdout());
        assertThat(ConfigLoader.load(printed, Map.of()).security().allowedOrigins())
                .containsExactly("https://a.example");
    }

    @Test
    void printConfigExitsWithZeroAndPrintsTheEffectiveConfigAsYaml() throws Exception {
        int code = run("--config", SHIPPED.toString(), "--port", "9001", "--set", "store.retentionCount=5",
                "--print-config");

        assertThat(code).isEqualTo(0);
        Path printed = dir.resolve("printed.yaml");
        Files.writeString(printed, stdout());
        ServerConfig c = ConfigLoader.load(printed, Map.of());
        assertThat(c.server().port()).isEqualTo(9001);
        assertThat(c.store().retentionCount()).isEqualTo(5);
        assertThat(stdout()).contains("server:").contains("port: 9001");
    }
}
