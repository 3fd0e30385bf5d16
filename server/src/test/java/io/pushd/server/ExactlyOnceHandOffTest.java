package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.FrameStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replay-to-live hand-off under load: publishers write as fast as they can while clients
 * keep connecting with IDs from the past; every client must see every sequence after its ID
 * exactly once, in order. The clients read raw frames ({@link FrameStream}), checked strictly.
 */
class ExactlyOnceHandOffTest {

    private static final String TOPIC = "stress";
    private static final int ROUNDS = 30;
    private static final int CLIENTS_PER_ROUND = 4;
    /** Events each client must see after the head at its connect, so the hand-off is behind it. */
    private static final int LIVE_TAIL = 100;

    @TempDir
    Path dataDir;
    PushServer server;
    final AtomicBoolean publishing = new AtomicBoolean(true);
    final AtomicLong acknowledged = new AtomicLong();
    final List<Thread> publishers = new ArrayList<>();

    /** The server's configuration; a subclass runs the same hand-off with other fan-out settings. */
    io.pushd.server.config.ServerConfig config(Path dir) {
        return TestServers.config(dir);
    }

    @BeforeEach
    void start() throws Exception {
        server = TestServers.start(config(dataDir));
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120); // bounded, whatever happens
                while (publishing.get() && System.nanoTime() < deadline) {
                    if (Http.publish(server.port(), TOPIC, "{\"v\":1}").status() == 201) {
                        acknowledged.incrementAndGet();
                    }
                }
            }, "publisher-" + i);
            t.start();
            publishers.add(t);
        }
    }

    @AfterEach
    void stop() throws Exception {
        publishing.set(false);
        for (Thread t : publishers) {
            t.join(10_000);
        }
        server.close();
    }

    @Test
    void everyReconnectingClientSeesEverySequenceAfterItsIdExactlyOnceWhilePublishersRunFlatOut()
            throws Exception {
        while (acknowledged.get() < 500) {
            Thread.sleep(10);
        }
        long checkedEvents = 0;
        int replayedFromStore = 0;
        for (int round = 0; round < ROUNDS; round++) {
            List<FrameStream> clients = new ArrayList<>();
            List<Long> starts = new ArrayList<>();
            for (int c = 0; c < CLIENTS_PER_ROUND; c++) {
                long head = server.store().range(TOPIC).head();
                long after = ThreadLocalRandom.current().nextLong(Math.max(0, head - 400), head + 1);
                starts.add(after);
                clients.add(FrameStream.connect(server.port(), "topic=" + TOPIC + "@" + server.epoch() + "-" + after));
            }
            for (int c = 0; c < clients.size(); c++) {
                try (FrameStream client = clients.get(c)) {
                    JsonNode subscribed = client.next();
                    assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                    long headAtSubscribe = EventId.parse(subscribed.path("head").asText()).seq();
                    long expected = starts.get(c) + 1;
                    long until = headAtSubscribe + LIVE_TAIL;
                    while (expected <= until) {
                        JsonNode m = next(client, round, c, expected, headAtSubscribe);
                        assertThat(m.path("type").asText()).as("message %s", m).isEqualTo("event");
                        long seq = EventId.parse(m.path("id").asText()).seq();
                        assertThat(seq).as("round %d client %d: sequence after %d", round, c, expected - 1)
                                .isEqualTo(expected);
                        expected++;
                        checkedEvents++;
                    }
                    if (headAtSubscribe > starts.get(c)) {
                        replayedFromStore++;
                    }
                }
            }
        }
        // The test is only meaningful if the hand-off really happened under load.
        assertThat(replayedFromStore).isGreaterThan(ROUNDS);
        assertThat(checkedEvents).isGreaterThan((long) ROUNDS * CLIENTS_PER_ROUND * LIVE_TAIL);
    }

    /** The client's next message; when none comes, what the server and the publishers were doing. */
    private JsonNode next(FrameStream client, int round, int c, long expected, long headAtSubscribe)
            throws InterruptedException {
        try {
            return client.next();
        } catch (AssertionError quiet) {
            StringBuilder publisherStates = new StringBuilder();
            for (Thread t : publishers) {
                publisherStates.append(t.getName()).append(' ').append(t.getState()).append(' ');
            }
            throw new AssertionError("round " + round + " client " + c + " waits for " + expected
                    + " (head at subscribe " + headAtSubscribe + "); store head now "
                    + server.store().range(TOPIC).head() + ", " + acknowledged.get() + " acknowledged, "
                    + publisherStates + "; " + quiet.getMessage(), quiet);
        }
    }
}
