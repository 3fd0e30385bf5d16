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
import java.util.concurrent.TimeUnit;
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

    private long subscribers(String channel) throws Exception {
        String[] lines = redis.cli("PUBSUB", "NUMSUB", channel).trim().split("\n");
        return Long.parseLong(lines[lines.length - 1].trim());
    }

    @Test
    void aNodeSubscribedToATopicItDoesNotFollowUnsubscribesOnItsFirstMessage() throws Exception {
        // what an unsubscribe refused during a reconnect leaves: Lettuce forgets a channel only
        // when Redis confirms, and subscribes to the ones it remembers again on reconnect
        RedisHistory history = (RedisHistory) b.history();
        history.link().followAsync("stray").get(5, TimeUnit.SECONDS);
        assertThat(subscribers("push:{stray}:ev")).isEqualTo(1);
        assertThat(history.known("stray")).as("not followed").isNull();

        redis.cli("PUBLISH", "push:{stray}:ev", "e1 1 1800000000000 {}");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (subscribers("push:{stray}:ev") != 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(subscribers("push:{stray}:ev")).as("unsubscribed after its first message").isZero();
        assertThat(history.known("stray")).isNull();

        try (WsClient client = WsClient.connect(b.port(), "topic=stray")) { // and followed again on use
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribers("push:{stray}:ev")).isEqualTo(1);
            Http.publish(a.port(), "stray", "{\"n\":1}");
            assertThat(client.awaitEvents(1, Duration.ofSeconds(5)).get(0).path("data").path("n").asInt()).isEqualTo(1);
        }
    }
}
