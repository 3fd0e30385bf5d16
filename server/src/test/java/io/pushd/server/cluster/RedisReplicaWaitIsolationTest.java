package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Redis blocks a whole client connection while its {@code WAIT} waits for replicas: with {@code
 * cluster.replicasToAck} and the replica gone, every publish batch holds its connection for
 * {@code cluster.replicasAckTimeout}. The node's reads (loads, history pages from Redis) must not
 * queue behind it.
 */
class RedisReplicaWaitIsolationTest {

    private static final long ACK_TIMEOUT_MILLIS = 3000;

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
                .withCluster(new Cluster(master.uri(), Duration.ofSeconds(5), 1, Duration.ofMillis(ACK_TIMEOUT_MILLIS))));
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
        replica.close();
        master.close();
    }

    private static long millisSince(long started) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    }

    @Test
    void readsAndLoadsOfTheNodeDoNotWaitForTheReplicasOfItsPublishes() throws Exception {
        for (int i = 1; i <= 5; i++) { // stored, never read here: the node loads 'cold' on the read below
            assertThat(Http.publish(node.port(), "cold", "{\"i\":" + i + "}").status()).isEqualTo(201);
        }
        replica.stop();
        CompletableFuture<Long> publishing = CompletableFuture.supplyAsync(() -> {
            long started = System.nanoTime();
            assertThat(Http.publish(node.port(), "durable", "{\"i\":1}").status()).isEqualTo(201);
            return millisSince(started);
        });
        Thread.sleep(500); // the publish's WAIT is under way

        long started = System.nanoTime();
        Http.Response page = Http.get(node.port(), "/v1/topics/cold/events");
        long pageMillis = millisSince(started);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.json().path("events").size()).isEqualTo(5);

        started = System.nanoTime();
        try (WsClient client = WsClient.connect(node.port(), "topic=fresh")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
        }
        long loadMillis = millisSince(started);

        assertThat(publishing.get(10, TimeUnit.SECONDS)).as("the publish waited for the missing replica")
                .isGreaterThanOrEqualTo(ACK_TIMEOUT_MILLIS - 200);
        // both were asked while the WAIT had more than two seconds to go
        assertThat(pageMillis).as("history page of a topic the node had not loaded").isLessThan(1500);
        assertThat(loadMillis).as("subscription to a new topic").isLessThan(1500);
    }
}
