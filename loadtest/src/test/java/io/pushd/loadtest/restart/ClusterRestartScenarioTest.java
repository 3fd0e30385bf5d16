package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.LoadTestMain;
import io.pushd.loadtest.cluster.Binaries;
import io.pushd.loadtest.report.ReportWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code restart --nodes 3} end to end: a real redis-server, three nodes of the fat jar and the
 * real nginx in front, round robin; a rolling graceful restart of every node, then a kill -9 of
 * one; each node's clients back on the others, spread out, and every client holding every
 * acknowledged event exactly once. A smaller crowd than the command's default (300 clients, so
 * ~100 per node) keeps it under a minute and a half on CI.
 *
 * <p>Skipped without nginx or redis-server, unless {@code PUSH_REQUIRE_NGINX=true} /
 * {@code PUSH_REQUIRE_REDIS=true} (system property or environment; {@code .ci/run} sets both), which
 * makes a missing binary a failure.
 */
class ClusterRestartScenarioTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path reportDir;

    @Test
    @Timeout(200)
    void everyNodeOfAThreeNodeClusterRestartsAndCrashesWhileItsClientsLandOnTheOthersExactlyOnce() throws Exception {
        require("nginx", "PUSH_REQUIRE_NGINX", "nginx-light");
        require("redis-server", "PUSH_REQUIRE_REDIS", "redis-server");
        String serverJar = System.getProperty("push.server.jar", "../server/target/push-server.jar");
        assertThat(Path.of(serverJar)).as("server fat jar (built by the server module)").isRegularFile();

        int exit = LoadTestMain.execute("restart", "--nodes", "3",
                "--server-jar", serverJar,
                "--server-set", "fanout.warmup=false", // the live warm-up: not what this tests, ~4 s a start
                "--server-set", "store.replayWarmup=false", // the replay warm-up: likewise, 1.5-3 s a start
                "--clients", "300",
                "--topics", "6",
                "--rate", "60",
                "--client-threads", "2",
                "--steady", "2s",
                // ~100 clients per node. A drain plans their returns evenly (~17 % per second), but
                // after the kill -9 only the clients' own independent 0-5 s jitter spreads them, and a
                // sliding 1 s window over so few samples often tops 30 % (sampling noise, not a storm);
                // the full-size run (1,000 clients) keeps the default 30 %.
                "--max-share", "40",
                "--timeout", "150s",
                "--report-dir", reportDir.toString());

        JsonNode report = JSON.readTree(reportDir.resolve(ReportWriter.JSON_FILE).toFile());
        String summary = report.toPrettyString();
        for (JsonNode check : report.get("checks")) {
            assertThat(check.get("passed").asBoolean()).as("%s: %s", check.get("name"), check.get("detail")).isTrue();
        }
        JsonNode restarts = report.get("restarts");
        assertThat(restarts).as(summary).hasSize(4);
        int sum = 0;
        for (int i = 0; i < 4; i++) {
            JsonNode r = restarts.get(i);
            assertThat(r.get("mode").asText()).as(summary).isEqualTo(i < 3 ? "graceful" : "crash");
            assertThat(r.get("node").asInt()).as(summary).isEqualTo(i < 3 ? i + 1 : 1);
            assertThat(r.get("clients").asInt()).as("the node had clients, %s", r).isPositive();
            assertThat(r.get("reconnected").asInt()).as("all back, %s", r).isEqualTo(r.get("clients").asInt());
            sum += i < 3 ? r.get("clients").asInt() : 0;
        }
        assertThat(sum).as("every client sat on some node that was restarted at least once").isGreaterThanOrEqualTo(300);

        JsonNode perNode = report.get("reconnectsPerNode");
        assertThat(perNode).as(summary).hasSize(4);
        for (int i = 0; i < 4; i++) {
            JsonNode p = perNode.get(i);
            int restarted = p.get("node").asInt();
            int landed = 0;
            for (int k = 1; k <= 3; k++) {
                landed += p.get("landedOn").get("node-" + k).asInt();
            }
            assertThat(p.get("onItAtSignal").asInt()).as("nginx had them on node-%d, %s", restarted, p)
                    .isEqualTo(restarts.get(i).get("clients").asInt());
            assertThat(landed).as("nginx saw each land somewhere, %s", p).isEqualTo(p.get("onItAtSignal").asInt());
            assertThat(p.get("landedOn").get("node-" + restarted).asInt())
                    .as("most land on the other nodes (the restarted one is only back at the tail), %s", p)
                    .isLessThan(landed / 2);
        }
        JsonNode deliveries = report.get("deliveries");
        assertThat(deliveries.get("clientsWrong").asInt()).as(summary).isZero();
        assertThat(deliveries.get("total").asLong()).as("events were delivered at all").isPositive();
        assertThat(exit).isZero();
    }

    @Test
    void clusterOptionsThatCannotApplyAreUsageErrors() {
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--url", "http://127.0.0.1:1")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--restarts", "2")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--source-addresses", "2")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--crash-node", "4")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "10")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--restart-command", "true")).isEqualTo(2);
        assertThat(LoadTestMain.execute("restart", "--nodes", "3", "--nginx", "/nonexistent/nginx")).isEqualTo(2);
    }

    @Test
    void everyClientHasItsOwnLoopbackAddressAndTheAddressNamesTheClient() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < ClusterRestartScenario.MAX_CLIENTS; i++) {
            java.net.InetAddress a = ClusterRestartScenario.clientAddress(i);
            assertThat(a.isLoopbackAddress()).isTrue();
            assertThat(ClusterRestartScenario.clientIndex(a.getHostAddress())).isEqualTo(i);
            seen.add(a.getHostAddress());
        }
        assertThat(seen).hasSize(ClusterRestartScenario.MAX_CLIENTS);
        assertThat(ClusterRestartScenario.clientIndex("127.0.0.1")).as("nginx or a publisher").isEqualTo(-1);
        assertThat(ClusterRestartScenario.clientIndex("127.100.0.0")).isEqualTo(-1);
    }

    /** Aborts (skips) when {@code name} is missing, or fails when {@code property} says it is required. */
    private static void require(String name, String property, String debianPackage) {
        if (Binaries.find(null, name).isPresent()) {
            return;
        }
        String message = name + " not found (/usr/sbin, /usr/bin, PATH); install Debian's " + debianPackage;
        if ("true".equalsIgnoreCase(System.getProperty(property, System.getenv(property)))) {
            fail(message + " (" + property + "=true: not skipping)");
        }
        Assumptions.abort(message);
    }
}
