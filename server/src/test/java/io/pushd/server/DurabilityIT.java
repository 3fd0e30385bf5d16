package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import io.pushd.server.testing.WsClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server ({@code java -jar}) keeps what it acknowledged across a graceful stop, a
 * {@code kill -9}, and knows when its history was replaced.
 */
class DurabilityIT {

    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    private final List<WsClient> clients = new CopyOnWriteArrayList<>();

    @AfterEach
    void killServersAndClients() throws InterruptedException {
        servers.killAll();
        for (WsClient c : clients) {
            c.socket().abort();
        }
    }

    private WsClient connect(int port, String query) {
        WsClient c = WsClient.connect(port, query);
        clients.add(c);
        return c;
    }

    @Test
    void publishedEventsSurviveGracefulStopAndRestartOnSamePort() throws Exception {
        Path data = tmp.resolve("data");
        int port = ServerProcess.freePort();
        ServerProcess first = servers.start(tmp, port, data, "drain.lbGrace=0s");

        List<String> orders = new ArrayList<>();
        List<String> prices = new ArrayList<>();
        for (int i = 1; i <= 50; i++) {
            orders.add(publishCreated(port, "orders", "{\"n\":" + i + ",\"t\":\"orders\"}"));
            prices.add(publishCreated(port, "prices", "{\"n\":" + i + ",\"t\":\"prices\"}"));
        }
        String epoch = Http.get(port, "/v1/topics/orders").json().path("epoch").asText();
        assertThat(epoch).isNotEmpty();
        assertThat(orders.get(49)).isEqualTo(epoch + "-50");

        // A live WebSocket during the stop leaves the server's side of that connection in TIME_WAIT.
        WsClient live = connect(port, "topic=orders");
        assertThat(live.next().path("type").asText()).isEqualTo("subscribed");

        first.sigterm();
        assertThat(first.awaitExit(STOP_TIMEOUT)).as("exit code after SIGTERM").isZero();
        assertThat(live.awaitClose(Duration.ofSeconds(5))).isEqualTo(1012);

        assertThat(timeWaitSockets(port)).as("server-side sockets of port " + port
                + " in TIME_WAIT (the restart below must bind anyway)").isPositive();
        long restartedAt = System.nanoTime();
        ServerProcess second = servers.start(tmp, port, data);
        long restartMillis = (System.nanoTime() - restartedAt) / 1_000_000;
        System.out.println("restart on the same port ready (/readyz) after " + restartMillis + " ms");

        JsonNode info = Http.get(port, "/v1/topics/orders").json();
        assertThat(info.path("epoch").asText()).as("epoch after restart").isEqualTo(epoch);
        assertThat(info.path("head").asText()).isEqualTo(orders.get(49));
        assertThat(info.path("oldest").asText()).isEqualTo(epoch + "-1");
        assertThat(Http.get(port, "/v1/topics/prices").json().path("head").asText()).isEqualTo(prices.get(49));

        WsClient resumed = connect(port, "topic=orders&after=" + orders.get(9));
        JsonNode subscribed = resumed.next();
        assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
        assertThat(subscribed.path("head").asText()).isEqualTo(orders.get(49));
        List<JsonNode> replayed = resumed.awaitEvents(40, Duration.ofSeconds(10));
        assertThat(replayed).extracting(m -> m.path("type").asText()).containsOnly("event");
        assertThat(replayed).extracting(m -> m.path("id").asText()).containsExactlyElementsOf(orders.subList(10, 50));
        assertThat(replayed).extracting(m -> m.path("data").path("n").asInt())
                .containsExactlyElementsOf(range(11, 50));
        assertThat(replayed).extracting(m -> m.path("data").path("t").asText()).containsOnly("orders");
        assertThat(resumed.messages.poll(300, TimeUnit.MILLISECONDS)).as("anything after event 50").isNull();

        assertThat(publishCreated(port, "orders", "{\"n\":51}")).isEqualTo(epoch + "-51");
        assertThat(resumed.next().path("id").asText()).isEqualTo(epoch + "-51");
        assertThat(second.isAlive()).isTrue();
    }

    @Test
    void acknowledgedEventsSurviveKillDashNine() throws Exception {
        Path data = tmp.resolve("data");
        int port = ServerProcess.freePort();
        ServerProcess first = servers.start(tmp, port, data);
        String topic = "ledger";

        Map<String, String> acknowledged = new ConcurrentHashMap<>(); // id -> data the publisher sent
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> publishers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int thread = t;
            Thread p = new Thread(() -> {
                for (int n = 0; n < 1_000_000 && !stop.get(); n++) {
                    String body = "{\"thread\":" + thread + ",\"n\":" + n + "}";
                    Http.Response r;
                    try {
                        r = Http.publish(port, topic, body);
                    } catch (IllegalStateException connectionGone) {
                        return; // killed under us: this publish was not acknowledged
                    }
                    if (r.status() / 100 == 2) {
                        acknowledged.put(r.json().path("id").asText(), body);
                    }
                }
            }, "publisher-" + t);
            p.setDaemon(true);
            p.start();
            publishers.add(p);
        }
        Thread.sleep(1_500);
        first.sigkill(); // mid-stream: both threads are still publishing
        assertThat(first.isAlive()).isFalse();
        stop.set(true);
        for (Thread p : publishers) {
            p.join(15_000);
            assertThat(p.isAlive()).as(p.getName() + " finished").isFalse();
        }
        assertThat(acknowledged).as("acknowledged publishes before the kill").hasSizeGreaterThan(20);
        String epoch = EventId.parse(acknowledged.keySet().iterator().next()).epoch();
        long maxAcked = acknowledged.keySet().stream().mapToLong(id -> EventId.parse(id).seq()).max().orElseThrow();

        servers.start(tmp, port, data);
        JsonNode info = Http.get(port, "/v1/topics/" + topic).json();
        assertThat(info.path("epoch").asText()).isEqualTo(epoch);
        long head = EventId.parse(info.path("head").asText()).seq();
        assertThat(head).as("head after restart").isGreaterThanOrEqualTo(maxAcked);
        System.out.println(acknowledged.size() + " acknowledged before kill -9, highest " + maxAcked
                + ", head after restart " + head);

        WsClient replay = connect(port, "topic=" + topic + "@" + epoch + "-0");
        JsonNode subscribed = replay.next();
        assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
        assertThat(subscribed.path("oldest").asText()).isEqualTo(epoch + "-1");
        List<JsonNode> all = replay.awaitEvents((int) head, Duration.ofSeconds(30));
        assertThat(all).extracting(m -> m.path("type").asText()).as("no reset, only events").containsOnly("event");
        assertThat(all).extracting(m -> EventId.parse(m.path("id").asText()).seq())
                .as("sequence without gaps").containsExactlyElementsOf(rangeLong(1, head));
        Map<String, String> stored = new ConcurrentHashMap<>();
        for (JsonNode m : all) {
            stored.put(m.path("id").asText(), m.path("data").toString());
        }
        for (Map.Entry<String, String> ack : acknowledged.entrySet()) {
            assertThat(stored.get(ack.getKey())).as("data of acknowledged " + ack.getKey()).isEqualTo(ack.getValue());
        }

        assertThat(publishCreated(port, topic, "{\"after\":\"kill\"}")).isEqualTo(epoch + "-" + (head + 1));
        assertThat(replay.next().path("id").asText()).isEqualTo(epoch + "-" + (head + 1));
    }

    @Test
    void wipedDataDirectoryStartsANewEpochAndOldIdsGetReset() throws Exception {
        Path data = tmp.resolve("data");
        int port = ServerProcess.freePort();
        ServerProcess first = servers.start(tmp, port, data, "drain.lbGrace=0s");
        publishCreated(port, "t", "{\"n\":1}");
        publishCreated(port, "t", "{\"n\":2}");
        String oldId = publishCreated(port, "t", "{\"n\":3}");
        String oldEpoch = EventId.parse(oldId).epoch();
        first.sigterm();
        assertThat(first.awaitExit(STOP_TIMEOUT)).isZero();

        deleteRecursively(data);
        assertThat(data).doesNotExist();

        servers.start(tmp, port, data, "drain.lbGrace=0s");
        String newEpoch = Http.get(port, "/v1/topics/t").json().path("epoch").asText();
        assertThat(newEpoch).isNotEmpty().isNotEqualTo(oldEpoch);

        WsClient c = connect(port, "topic=t&after=" + oldId);
        JsonNode subscribed = c.next();
        assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
        assertThat(subscribed.get("head").isNull()).as("new history is empty").isTrue();
        JsonNode reset = c.next();
        assertThat(reset.path("type").asText()).isEqualTo("reset");
        assertThat(reset.path("topic").asText()).isEqualTo("t");
        assertThat(reset.path("reason").asText()).isEqualTo("unknown_epoch");
        assertThat(reset.path("id").asText()).isEqualTo(newEpoch + "-0");

        assertThat(publishCreated(port, "t", "{\"n\":\"new\"}")).isEqualTo(newEpoch + "-1");
        JsonNode event = c.next();
        assertThat(event.path("type").asText()).isEqualTo("event");
        assertThat(event.path("id").asText()).isEqualTo(newEpoch + "-1");
    }

    private static String publishCreated(int port, String topic, String json) {
        Http.Response r = Http.publish(port, topic, json);
        assertThat(r.status()).as("publish to " + topic + ": " + r.body()).isEqualTo(201);
        return r.json().path("id").asText();
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            out.add(i);
        }
        return out;
    }

    private static List<Long> rangeLong(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(i);
        }
        return out;
    }

    /** Loopback TCP sockets whose local port is {@code port} and state TIME_WAIT (Linux only). */
    static long timeWaitSockets(int port) throws IOException {
        String hexPort = String.format(":%04X", port);
        long n = 0;
        for (String file : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(file);
            if (!Files.isReadable(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && f[1].endsWith(hexPort) && f[3].equals("06")) {
                    n++;
                }
            }
        }
        return n;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
