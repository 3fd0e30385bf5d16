package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ServerConfig;
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

/** A replay that cannot be complete is answered with {@code reset}, never with a silent hole. */
class ResetTest {

    private static final int KEPT = 5;

    @TempDir
    Path dataDir;
    PushServer server;
    String e;

    @BeforeEach
    void start() throws Exception {
        ServerConfig base = TestServers.config(dataDir);
        server = TestServers.start(base.withStore(base.store().withRetention(Duration.ofHours(24), KEPT)));
        e = server.epoch();
        for (int i = 1; i <= 10; i++) {
            assertThat(Http.publish(server.port(), "t", "{\"n\":" + i + "}").status()).isEqualTo(201);
        }
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void idOlderThanTheKeptEventsGetsExpiredResetAtTheHead() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=t@" + e + "-2")) {
            JsonNode subscribed = c.next();
            assertThat(subscribed.path("oldest").asText()).isEqualTo(e + "-6");
            JsonNode reset = c.next();
            assertThat(reset.path("type").asText()).isEqualTo("reset");
            assertThat(reset.path("reason").asText()).isEqualTo("expired");
            assertThat(reset.path("id").asText()).isEqualTo(e + "-10");
            Http.publish(server.port(), "t", "{\"n\":11}");
            JsonNode next = c.next();
            assertThat(next.path("id").asText()).isEqualTo(e + "-11");
        }
    }

    @Test
    void idJustBeforeTheOldestKeptEventReplaysWithoutReset() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=t@" + e + "-5")) {
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            List<JsonNode> events = c.awaitEvents(5, Duration.ofSeconds(10));
            assertThat(events).extracting(m -> m.path("type").asText()).containsOnly("event");
            assertThat(events).extracting(m -> m.path("data").path("n").asInt()).containsExactly(6, 7, 8, 9, 10);
        }
    }

    @Test
    void idFromAnotherEpochGetsUnknownEpochReset() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "after=zz0other-3&topic=t")) {
            c.next();
            JsonNode reset = c.next();
            assertThat(reset.path("reason").asText()).isEqualTo("unknown_epoch");
            assertThat(reset.path("id").asText()).isEqualTo(e + "-10");
        }
    }

    @Test
    void idBeyondTheHeadGetsFutureReset() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "after=" + e + "-99&topic=t")) {
            c.next();
            JsonNode reset = c.next();
            assertThat(reset.path("reason").asText()).isEqualTo("future");
            assertThat(reset.path("id").asText()).isEqualTo(e + "-10");
        }
    }

    @Test
    void inBandSubscribeResumesLikeTheQueryForm() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=other")) {
            assertThat(c.next().path("topic").asText()).isEqualTo("other");
            c.send("{\"type\":\"subscribe\",\"topic\":\"t\",\"after\":\"" + e + "-8\"}");
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            List<JsonNode> events = c.awaitEvents(2, Duration.ofSeconds(10));
            assertThat(events).extracting(m -> m.path("data").path("n").asInt()).containsExactly(9, 10);
            c.send("{\"type\":\"subscribe\",\"topic\":\"other2\",\"after\":\"" + e + "-1\"}");
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(c.next().path("reason").asText()).isEqualTo("future");
        }
    }

    @Test
    void countRetentionKeepsOnlyTheNewestEventsOfATopic() {
        JsonNode info = Http.get(server.port(), "/v1/topics/t").json();
        assertThat(info.path("head").asText()).isEqualTo(e + "-10");
        assertThat(info.path("oldest").asText()).isEqualTo(e + "-6");
        assertThat(info.path("epoch").asText()).isEqualTo(e);
    }
}
