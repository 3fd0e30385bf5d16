package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ScratchMount;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory on a small file system of its own, filled up by publishing: what is refused is
 * not acknowledged, what is acknowledged is kept and readable, and publishing resumes by itself
 * once space is freed, with the next number.
 */
class StorageFullTest {

    private static final String TOPIC = "ledger";
    /** About 5 KB, the size from the report. */
    private static final String PAD = "x".repeat(5000);
    private static final long MIN_FREE = 512 << 10;

    @TempDir
    Path tmp;

    private ScratchMount mount;
    private PushServer server;
    private final List<WsClient> clients = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        clients.forEach(c -> c.socket().abort());
        if (server != null) {
            server.close();
        }
        if (mount != null) {
            mount.close();
        }
    }

    @Test
    void onAFullTmpfsPublishesAreRefusedWith507AndNothingAcknowledgedIsLost() throws Exception {
        mount = ScratchMount.tmpfs(tmp, 20);
        fillPublishFreeAndRestart();
    }

    @Test
    void onAFullExt4ImagePublishesAreRefusedWith507AndNothingAcknowledgedIsLost() throws Exception {
        mount = ScratchMount.ext4(tmp, 32);
        fillPublishFreeAndRestart();
    }

    @Test
    void aRestartOnANearlyFullDiskSkipsTheReplayWarmUpAndServesTheHistory() throws Exception {
        mount = ScratchMount.tmpfs(tmp, 100);
        ServerConfig c = TestServers.config(mount.dir().resolve("data"));
        c = c.withStore(c.store().withReplayWarmup(true));
        server = TestServers.start(c);
        assertThat(Http.publish(server.port(), TOPIC, "{\"n\":1}").status()).isEqualTo(201);
        String epoch = server.epoch();
        server.close();
        server = null;
        // 12 KiB free: the warm-up's scratch log would fault in Chronicle's first mapped write
        mount.fill("filler", 12 << 10);

        server = TestServers.start(c);
        assertThat(server.epoch()).isEqualTo(epoch);
        JsonNode history = Http.get(server.port(), "/v1/topics/" + TOPIC + "/events").json();
        assertThat(history.path("events")).hasSize(1);
        assertThat(Files.exists(mount.dir().resolve("data").resolve("replay-warmup"))).isFalse();
    }

    private ServerConfig config() {
        ServerConfig c = TestServers.config(mount.dir().resolve("data"));
        return c.withStore(c.store().withMinFreeBytes(MIN_FREE));
    }

    private void fillPublishFreeAndRestart() throws Exception {
        server = TestServers.start(config());
        int port = server.port();
        String epoch = server.epoch();
        // Leave ~5 MiB (about a thousand events) so the test is quick; the filler is what gets freed later.
        Path filler = mount.fill("filler", 5L << 20);

        List<String> acknowledged = new ArrayList<>(); // data of event n at index n - 1
        Http.Response refused = null;
        int refusals = 0;
        // Until 20 in a row are refused (ext4 may find a few blocks again after a refusal: those are stored).
        for (int n = 1, inARow = 0; inARow < 20; n++) {
            String data = "{\"n\":" + n + ",\"pad\":\"" + PAD + "\"}";
            Http.Response r = Http.publish(port, TOPIC, data);
            if (r.status() == 201) {
                assertThat(r.json().path("id").asText()).as("id of an acknowledged publish: no number burned")
                        .isEqualTo(epoch + "-" + (acknowledged.size() + 1));
                acknowledged.add(data);
                inARow = 0;
            } else {
                assertThat(r.status()).as("a refused publish: %s", r.body()).isEqualTo(507);
                refused = r;
                refusals++;
                inARow++;
            }
            assertThat(n).as("publishes before the disk was full").isLessThan(5_000);
        }
        int stored = acknowledged.size();
        assertThat(stored).as("events stored before the disk was full").isGreaterThan(100);
        assertThat(refused.status()).isEqualTo(507);
        assertThat(refused.json().path("error").asText()).isEqualTo("storage_full");
        assertThat(refused.json().path("message").asText()).isNotBlank();
        assertThat(refused.header("Retry-After")).isNotNull();

        String metrics = Http.get(port, "/metrics").body();
        assertThat(metric(metrics, "push_store_writable")).isEqualTo(0);
        assertThat(metric(metrics, "push_store_refused_publishes_total")).isEqualTo(refusals);
        assertThat(metric(metrics, "push_store_free_bytes")).isLessThan(MIN_FREE + (2 << 20));
        Http.Response ready = Http.get(port, "/readyz");
        assertThat(ready.status()).as("readiness while full (subscribers are still served)").isEqualTo(200);
        assertThat(ready.json().path("store").asText()).isEqualTo("full");

        // What was stored can still be replayed while the disk is full, without a stall.
        assertReplaysExactly(port, epoch, acknowledged);

        Files.delete(filler);
        for (int i = 0; i < 20; i++) {
            String data = "{\"n\":" + (stored + i + 1) + ",\"after\":\"freed\"}";
            Http.Response r = Http.publish(port, TOPIC, data);
            assertThat(r.status()).as("publish %d after space was freed: %s", i, r.body()).isEqualTo(201);
            assertThat(r.json().path("id").asText()).as("no gap, no reuse")
                    .isEqualTo(epoch + "-" + (acknowledged.size() + 1));
            acknowledged.add(data);
        }
        assertThat(metric(Http.get(port, "/metrics").body(), "push_store_writable")).isEqualTo(1);
        assertReplaysExactly(port, epoch, acknowledged);

        server.close();
        server = TestServers.start(config());
        port = server.port();
        assertThat(server.epoch()).isEqualTo(epoch);
        assertThat(Http.get(port, "/v1/topics/" + TOPIC).json().path("head").asText())
                .isEqualTo(epoch + "-" + acknowledged.size());
        assertReplaysExactly(port, epoch, acknowledged);
        Http.Response next = Http.publish(port, TOPIC, "{\"n\":\"next\"}");
        assertThat(next.status()).isEqualTo(201);
        assertThat(next.json().path("id").asText()).as("the next ID after a restart is new")
                .isEqualTo(epoch + "-" + (acknowledged.size() + 1));
    }

    /** A replay from {@code <epoch>-0} over a real WebSocket gets every event exactly once, in order. */
    private void assertReplaysExactly(int port, String epoch, List<String> expected) throws Exception {
        WsClient ws = WsClient.connect(port, "topic=" + TOPIC + "@" + epoch + "-0");
        clients.add(ws);
        assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
        List<JsonNode> events = ws.awaitEvents(expected.size(), Duration.ofSeconds(20));
        assertThat(events).extracting(e -> e.path("type").asText()).containsOnly("event");
        for (int i = 0; i < expected.size(); i++) {
            JsonNode e = events.get(i);
            assertThat(e.path("id").asText()).isEqualTo(epoch + "-" + (i + 1));
            assertThat(e.path("data").toString()).as("data of event %d", i + 1).isEqualTo(expected.get(i));
        }
        assertThat(ws.messages.poll(200, TimeUnit.MILLISECONDS)).as("anything after the last event").isNull();
        ws.close();
        clients.remove(ws);
    }

    private static double metric(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric " + name + " in\n" + scrape));
    }
}
