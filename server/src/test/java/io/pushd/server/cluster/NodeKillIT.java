package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes of the fat jar share one Redis; one is killed with SIGKILL while publishes go to both.
 * Every acknowledged event survives (acknowledged = Redis ran the script), and the dead node's
 * client resumes on the other node exactly once, in order.
 */
class NodeKillIT {

    @TempDir
    Path dir;
    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();
    RedisProcess redis;

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisProcess.start(dir);
    }

    @AfterEach
    void stopRedis() throws Exception {
        servers.killAll();
        redis.close();
    }

    @Test
    void aNodeKilledWithSigkillLosesNoAcknowledgedEventAndItsClientResumesOnTheOtherNodeExactlyOnce()
            throws Exception {
        String cluster = "cluster.redisUri=" + redis.uri();
        ServerProcess a = servers.start(dir.resolve("a"), ServerProcess.freePort(), dir.resolve("a-data"), cluster);
        ServerProcess b = servers.start(dir.resolve("b"), ServerProcess.freePort(), dir.resolve("b-data"), cluster);
        List<String> acknowledged = new ArrayList<>();
        AtomicBoolean publishing = new AtomicBoolean(true);
        Thread publisher = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int i = 0; publishing.get() && System.nanoTime() < deadline; i++) {
                ServerProcess to = i % 2 == 0 ? a : b;
                try {
                    Http.Response r = Http.publish(to.port(), "k", "{\"i\":" + i + "}");
                    if (r.status() == 201) {
                        synchronized (acknowledged) {
                            acknowledged.add(r.json().path("id").asText());
                        }
                    }
                } catch (RuntimeException refusedByTheDeadNode) {
                    // not acknowledged: nothing is promised
                }
            }
        }, "publisher");
        publisher.start();
        String last;
        long expected;
        try (WsClient onA = WsClient.connect(a.port(), "topic=k")) {
            JsonNode subscribed = onA.next();
            expected = subscribed.path("head").isNull() ? 1
                    : EventId.parse(subscribed.path("head").asText()).seq() + 1;
            last = null;
            for (int n = 0; n < 200; n++) {
                JsonNode m = onA.next();
                EventId id = EventId.parse(m.path("id").asText());
                assertThat(id.seq()).isEqualTo(expected++);
                last = id.toString();
            }
            a.sigkill();
        }
        try (WsClient onB = WsClient.connect(b.port(), "topic=k@" + last)) {
            assertThat(onB.next().path("type").asText()).isEqualTo("subscribed");
            for (int n = 0; n < 300; n++) { // publishes continue, now only B takes them
                JsonNode m = onB.next();
                assertThat(EventId.parse(m.path("id").asText()).seq()).as("after %s", last).isEqualTo(expected++);
            }
        } finally {
            publishing.set(false);
            publisher.join(10_000);
        }
        String epoch = EventId.parse(last).epoch();
        long maxAcknowledged;
        synchronized (acknowledged) {
            maxAcknowledged = acknowledged.stream().mapToLong(id -> EventId.parse(id).seq()).max().orElseThrow();
        }
        List<String> all = new ArrayList<>();
        try (WsClient everything = WsClient.connect(b.port(), "topic=k@" + epoch + "-0")) {
            assertThat(everything.next().path("type").asText()).isEqualTo("subscribed");
            for (long seq = 1; seq <= maxAcknowledged; seq++) {
                JsonNode m = everything.next(Duration.ofSeconds(10));
                assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + seq);
                all.add(m.path("id").asText());
            }
        }
        assertThat(all).containsAll(acknowledged);
        assertThat(acknowledged.size()).isGreaterThan(400);
    }
}
