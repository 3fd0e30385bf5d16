package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Redis trims a topic's stream (the publish script's MAXLEN ~ and age trim) without telling the
 * nodes: what a node names as the topic's oldest kept event follows what Redis keeps.
 */
class ClusterTrimmedOldestTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer node;

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void subscribedTopicAndHistoryNameTheOldestEventRedisStillKeepsAfterItTrimmedAFollowedTopic() throws Exception {
        redis = RedisProcess.start(dir);
        ServerConfig c = TestServers.config(Files.createDirectories(dir.resolve("node")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2)).withIdleTopicTimeout(Duration.ZERO));
        node = TestServers.start(c.withStore(c.store().withRetention(c.store().retentionAge(), 10)));
        String epoch;
        try (WsClient follower = WsClient.connect(node.port(), "topic=trimmed")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            for (int i = 1; i <= 300; i++) {
                Http.Response r = Http.publish(node.port(), "trimmed", "{\"i\":" + i + "}");
                assertThat(r.status()).as(r.body()).isEqualTo(201);
            }
            follower.awaitEvents(300, Duration.ofSeconds(20));
            epoch = Http.get(node.port(), "/v1/topics/trimmed").json().path("epoch").asText();
            redis.cli("XTRIM", "push:{trimmed}:s", "MAXLEN", "10"); // what MAXLEN ~ does, exactly
            String oldest = epoch + "-291";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!oldest.equals(Http.get(node.port(), "/v1/topics/trimmed").json().path("oldest").asText())) {
                assertThat(System.nanoTime()).as("the topic's oldest becomes " + oldest).isLessThan(deadline);
                Thread.sleep(50);
            }
            try (WsClient late = WsClient.connect(node.port(), "topic=trimmed")) {
                JsonNode subscribed = late.next();
                assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                assertThat(subscribed.path("oldest").asText()).isEqualTo(oldest);
            }
            Http.Response page = Http.get(node.port(), "/v1/topics/trimmed/events?limit=5");
            assertThat(page.status()).as(page.body()).isEqualTo(200);
            assertThat(page.json().path("events").get(0).path("id").asText()).isEqualTo(oldest);
        }
    }
}
