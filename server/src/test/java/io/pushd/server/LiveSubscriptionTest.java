package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LiveSubscriptionTest {

    @TempDir
    Path dataDir;
    PushServer server;

    @BeforeEach
    void start() throws Exception {
        server = TestServers.start(dataDir);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void subscriberGetsSubscribedThenLiveEventsInOrder() throws Exception {
        Http.publish(server.port(), "news", "{\"n\":0}");
        try (WsClient c = WsClient.connect(server.port(), "topic=news")) {
            JsonNode subscribed = c.next();
            assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribed.path("head").asText()).isEqualTo(server.epoch() + "-1");
            assertThat(subscribed.path("oldest").asText()).isEqualTo(server.epoch() + "-1");
            for (int i = 1; i <= 3; i++) {
                assertThat(Http.publish(server.port(), "news", "{\"n\":" + i + "}").status()).isEqualTo(201);
            }
            List<JsonNode> events = c.awaitEvents(3, Duration.ofSeconds(10));
            assertThat(events).extracting(e -> e.path("id").asText())
                    .containsExactly(server.epoch() + "-2", server.epoch() + "-3", server.epoch() + "-4");
            assertThat(events).extracting(e -> e.path("data").path("n").asInt()).containsExactly(1, 2, 3);
            assertThat(events.get(0).path("ts").asLong()).isPositive();
        }
    }

    @Test
    void resumeAfterAnIdReplaysOnlyNewerEvents() throws Exception {
        for (int i = 1; i <= 5; i++) {
            Http.publish(server.port(), "t", "{\"n\":" + i + "}");
        }
        try (WsClient c = WsClient.connect(server.port(), "after=" + server.epoch() + "-2&topic=t")) {
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            List<JsonNode> events = c.awaitEvents(3, Duration.ofSeconds(10));
            assertThat(events).extracting(e -> e.path("data").path("n").asInt()).containsExactly(3, 4, 5);
            Http.publish(server.port(), "t", "{\"n\":6}");
            assertThat(c.next().path("data").path("n").asInt()).isEqualTo(6);
        }
    }

    @Test
    void emptyTopicIsSubscribedWithNullHeadAndOldest() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=fresh&after=")) {
            JsonNode s = c.next();
            assertThat(s.path("type").asText()).isEqualTo("subscribed");
            assertThat(s.get("head").isNull()).isTrue();
            assertThat(s.get("oldest").isNull()).isTrue();
        }
    }
}
