package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A draining node's client gets 1012 with a hint and resumes on another node, which is up. */
class ClusterDrainTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer a;
    PushServer b;

    @AfterEach
    void stop() throws Exception {
        for (PushServer s : new PushServer[] {a, b}) {
            if (s != null) {
                s.close();
            }
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aDrainingNodesClientGets1012WithAHintAndResumesOnAnotherNodeWithNoGap() throws Exception {
        redis = RedisProcess.start(dir);
        Cluster cluster = new Cluster(redis.uri(), Duration.ofSeconds(2));
        ServerConfig configA = TestServers.config(Files.createDirectories(dir.resolve("a"))).withCluster(cluster);
        // a restart of a node is no reason to keep its clients away: the other nodes serve them
        a = TestServers.start(configA.withDrain(configA.drain().withExpectRestart(true)));
        assertThat(a.returnsAfterMillis()).as("returns planned after a restart, cluster node").isZero();
        b = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("b"))).withCluster(cluster));
        String last = null;
        try (WsClient onA = WsClient.connect(a.port(), "topic=d")) {
            assertThat(onA.next().path("type").asText()).isEqualTo("subscribed");
            for (int i = 1; i <= 3; i++) {
                Http.publish(b.port(), "d", "{\"i\":" + i + "}");
            }
            for (JsonNode m : onA.awaitEvents(3, Duration.ofSeconds(5))) {
                last = m.path("id").asText();
            }
            Thread drain = new Thread(a::drain, "drain-a");
            drain.start();
            assertThat(onA.awaitClose(Duration.ofSeconds(20))).isEqualTo(1012);
            OptionalLong hint = CloseCode.parseRetryMs(onA.closeReason());
            assertThat(hint).as("retry hint in '%s'", onA.closeReason()).isPresent();
            assertThat(hint.getAsLong()).as("hint, ms").isBetween(0L, ServerConfig.Drain.DEFAULT_MIN_WINDOW.toMillis());
            Http.publish(b.port(), "d", "{\"i\":4}"); // while the client is away
            drain.join(30_000);
        }
        EventId before = EventId.parse(last);
        try (WsClient onB = WsClient.connect(b.port(), "topic=d@" + last)) {
            assertThat(onB.next().path("type").asText()).isEqualTo("subscribed");
            Http.publish(b.port(), "d", "{\"i\":5}");
            for (long seq = before.seq() + 1; seq <= 5; seq++) {
                JsonNode m = onB.next();
                assertThat(m.path("id").asText()).isEqualTo(before.epoch() + "-" + seq);
            }
        }
    }
}
