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
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On plain Redis a node subscribes per topic it follows, no pattern: it hears nothing else. */
class RedisSubscriptionTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer a;
    PushServer b;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        a = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("a")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
        b = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("b")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
    }

    @AfterEach
    void stop() throws Exception {
        a.close();
        b.close();
        redis.close();
    }

    @Test
    void aNodeSubscribesToTheChannelOfEachTopicItFollowsAndToNoPattern() throws Exception {
        assertThat(redis.cli("PUBSUB", "NUMPAT").trim()).isEqualTo("0");
        assertThat(redis.cli("PUBSUB", "CHANNELS").trim()).as("nothing followed yet").isEmpty();
        assertThat(Http.publish(a.port(), "only-published", "{}").status()).isEqualTo(201);
        try (WsClient client = WsClient.connect(b.port(), "topic=followed")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(Arrays.stream(redis.cli("PUBSUB", "CHANNELS").trim().split("\n")).map(String::trim))
                    .containsExactly("push:{followed}:ev");
            assertThat(redis.cli("PUBSUB", "NUMSUB", "push:{followed}:ev")).contains("1");
            assertThat(redis.cli("PUBSUB", "NUMPAT").trim()).isEqualTo("0");
            Http.publish(a.port(), "followed", "{\"n\":1}");
            assertThat(client.awaitEvents(1, Duration.ofSeconds(5)).get(0).path("data").path("n").asInt()).isEqualTo(1);
        }
    }
}
