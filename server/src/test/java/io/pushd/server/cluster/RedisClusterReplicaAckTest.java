package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster.replicasToAck} on a real Redis Cluster of three masters with a replica each: the
 * WAIT goes to the master each topic lives on, over the connection that ran its script (a WAIT
 * on a connection that wrote nothing returns at once, whatever the replicas hold).
 */
class RedisClusterReplicaAckTest {

    @TempDir
    Path dir;
    RedisClusterProcess redis;
    PushServer node;

    @BeforeEach
    void start() throws Exception {
        redis = RedisClusterProcess.start(dir, 1);
        node = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("node")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2), 1, Duration.ofMillis(400))));
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private double shortAcks() {
        return Http.get(node.port(), "/metrics").body().lines()
                .filter(l -> l.startsWith("push_cluster_replicas_short ") || l.startsWith("push_cluster_replicas_short{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric push_cluster_replicas_short"));
    }

    @Test
    void aPublishWaitsForTheReplicaOfTheMasterItsTopicLivesOn() throws Exception {
        Map<Integer, String> topics = redis.topicOnEachMaster("w");
        for (String t : topics.values()) {
            assertThat(Http.publish(node.port(), t, "{\"i\":1}").status()).isEqualTo(201);
        }
        assertThat(shortAcks()).as("every replica acknowledged").isZero();

        int master = topics.keySet().iterator().next();
        int replica = redis.replicaOf(master);
        Process sleeper = new ProcessBuilder("redis-cli", "-p", Integer.toString(replica), "DEBUG", "SLEEP", "1.5")
                .redirectErrorStream(true).start(); // the replica stops acknowledging for 1.5 s
        try {
            Thread.sleep(100);
            long started = System.nanoTime();
            assertThat(Http.publish(node.port(), topics.get(master), "{\"i\":2}").status())
                    .as("stored by the master: answered as stored").isEqualTo(201);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
                    .as("waited for the sleeping replica").isGreaterThanOrEqualTo(350);
            assertThat(shortAcks()).isEqualTo(1);
        } finally {
            sleeper.waitFor(10, TimeUnit.SECONDS);
        }
        for (String t : topics.values()) {
            assertThat(Http.publish(node.port(), t, "{\"i\":3}").status()).isEqualTo(201);
        }
        assertThat(shortAcks()).as("the replica is back").isEqualTo(1);
    }
}
