package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster.replicasToAck}: a publish is answered once a real replica ({@code --replicaof})
 * holds it; with the replica gone the answer is unchanged (Redis stored it) and the short
 * acknowledgement is counted.
 */
class RedisReplicaAckTest {

    @TempDir
    Path dir;
    RedisProcess master;
    RedisProcess replica;
    PushServer node;

    @BeforeEach
    void start() throws Exception {
        master = RedisProcess.start(Files.createDirectories(dir.resolve("master")));
        String masterPort = master.uri().substring(master.uri().lastIndexOf(':') + 1);
        replica = RedisProcess.start(Files.createDirectories(dir.resolve("replica")),
                "--replicaof", "127.0.0.1", masterPort);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!master.cli("INFO", "replication").contains("connected_slaves:1")
                || !replica.cli("INFO", "replication").contains("master_link_status:up")) {
            assertThat(System.nanoTime()).as("replica in sync").isLessThan(deadline);
            Thread.sleep(50);
        }
        node = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("node")))
                .withCluster(new Cluster(master.uri(), Duration.ofSeconds(2), 1, Duration.ofMillis(300))));
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
        replica.close();
        master.close();
    }

    private double shortAcks() {
        return Http.get(node.port(), "/metrics").body().lines()
                .filter(l -> l.startsWith("push_cluster_replicas_short ") || l.startsWith("push_cluster_replicas_short{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric push_cluster_replicas_short"));
    }

    @Test
    void aPublishIsAnsweredOnlyOnceTheReplicaHoldsItAndAMissingReplicaIsCountedNotRefused() throws Exception {
        for (int i = 1; i <= 20; i++) {
            assertThat(Http.publish(node.port(), "durable", "{\"i\":" + i + "}").status()).isEqualTo(201);
            // WAIT returned before the answer: the replica has every event answered so far
            assertThat(replica.cli("XLEN", "push:{durable}:s").trim()).isEqualTo(Integer.toString(i));
        }
        assertThat(shortAcks()).isZero();

        replica.stop();
        long started = System.nanoTime();
        assertThat(Http.publish(node.port(), "durable", "{\"i\":21}").status()).isEqualTo(201);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
                .as("waited for the replica up to replicasAckTimeout").isGreaterThanOrEqualTo(250);
        assertThat(shortAcks()).isEqualTo(1);
        assertThat(master.cli("XLEN", "push:{durable}:s").trim()).isEqualTo("21");
    }
}
