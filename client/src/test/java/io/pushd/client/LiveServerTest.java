package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.client.testing.Http;
import io.pushd.client.testing.Recorder;
import io.pushd.client.testing.TestServers;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client against a real server in this JVM, over real sockets. */
class LiveServerTest {

    private static final Duration WAIT = Duration.ofSeconds(15);

    @TempDir
    Path dataDir;
    PushServer server;
    ClientResources resources;
    final Recorder recorder = new Recorder();

    @BeforeEach
    void start() throws Exception {
        server = TestServers.start(dataDir);
        resources = ClientResources.create(2);
    }

    @AfterEach
    void stop() {
        resources.close();
        server.close();
    }

    /** Short delays so a restart costs well under a second. */
    private PushClientOptions.Builder options(int port) {
        return PushClientOptions.builder("127.0.0.1", port)
                .baseDelay(Duration.ofMillis(100)).maxDelay(Duration.ofMillis(400));
    }

    private static void publish(int port, String topic, int from, int to) {
        for (int i = from; i <= to; i++) {
            Http.publish(port, topic, "{\"n\":" + i + "}");
        }
    }

    @Test
    void eventsArriveInOrderAndEveryEventArrivesExactlyOnceAcrossAServerRestart() throws Exception {
        int port = server.port();
        PushClient client = resources.newClient(options(port).topic("t").build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);

        publish(port, "t", 1, 20);
        Recorder.await("20 events", WAIT, () -> recorder.events.size() == 20);
        server.close();
        Recorder.await("the disconnect", WAIT, () -> client.state() != ClientState.CONNECTED);

        server = TestServers.start(dataDir, port); // same port, same data: same epoch
        publish(port, "t", 21, 30); // most likely before the client is back: replayed from disk
        Recorder.await("the reconnect", WAIT, () -> recorder.connected.size() == 2);
        publish(port, "t", 31, 40); // live
        Recorder.await("40 events", WAIT, () -> recorder.events.size() >= 40);

        assertThat(recorder.seqs()).containsExactlyElementsOf(LongStream.rangeClosed(1, 40).boxed().toList());
        assertThat(recorder.events).extracting(e -> e.data().path("n").asInt())
                .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, 40).boxed().toList());
        assertThat(recorder.events).extracting(e -> e.id().epoch()).containsOnly(server.epoch());
        assertThat(client.lastId("t")).isEqualTo(new EventId(server.epoch(), 40));
        assertThat(client.duplicatesDropped()).isZero();
        assertThat(client.gaps()).isZero();
        assertThat(client.resets()).isZero();
        assertThat(client.connects()).isEqualTo(2);
        assertThat(recorder.resets).isEmpty();
    }

    @Test
    void aLiveOnlyTopicThatWasEmptyResumesFromItsFirstEventAfterARestart() throws Exception {
        int port = server.port();
        PushClient client = resources.newClient(options(port).topic("empty").build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        assertThat(client.lastId("empty")).isEqualTo(new EventId(server.epoch(), 0));
        server.close();
        Recorder.await("the disconnect", WAIT, () -> client.state() != ClientState.CONNECTED);

        server = TestServers.start(dataDir, port);
        publish(port, "empty", 1, 3); // published while the client is away or reconnecting
        Recorder.await("3 events", WAIT, () -> recorder.events.size() == 3);
        assertThat(recorder.seqs()).containsExactly(1L, 2L, 3L);
    }

    @Test
    void aStartingIdReplaysTheKeptEventsAfterItThenLive() throws Exception {
        int port = server.port();
        publish(port, "t", 1, 5);
        EventId start = new EventId(server.epoch(), 2);
        resources.newClient(options(port).topic("t", start).build(), recorder).start();

        Recorder.await("3 replayed events", WAIT, () -> recorder.events.size() == 3);
        publish(port, "t", 6, 6);
        Recorder.await("the live event", WAIT, () -> recorder.events.size() == 4);
        assertThat(recorder.seqs()).containsExactly(3L, 4L, 5L, 6L);
    }

    @Test
    void afterADrainTheClientWaitsAtLeastTheServersHintBeforeReconnecting() throws Exception {
        int port = server.port();
        List<long[]> chosen = new java.util.concurrent.CopyOnWriteArrayList<>(); // {attempt, hint or -1, delay}
        Backoff base = options(port).topic("t").build().backoff();
        Backoff recording = (attempt, hint) -> {
            Duration d = base.nextDelay(attempt, hint);
            chosen.add(new long[] {attempt, hint.orElse(-1), d.toMillis()});
            return d;
        };
        PushClient client = resources.newClient(options(port).topic("t").backoff(recording).build(), recorder)
                .start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);

        server.drain(); // 1012 with retryMs in [0, drain.minWindow = 5 s]; returns once stopped
        server = TestServers.start(dataDir, port);
        Recorder.await("the reconnect", Duration.ofSeconds(20), () -> recorder.connected.size() == 2);

        Recorder.Close close = recorder.closes.get(0);
        assertThat(close.code()).isEqualTo(CloseCode.SERVICE_RESTART.code());
        long hint = CloseCode.parseRetryMs(close.reason()).orElseThrow();
        assertThat(chosen.get(0)).containsExactly(0, hint, hint);
        long waitedMillis = (recorder.connected.get(1) - close.nanoTime()) / 1_000_000;
        assertThat(waitedMillis).isGreaterThanOrEqualTo(hint);
        assertThat(client.lastCloseCode()).isEqualTo(1012);
    }

    @Test
    void anIdFromAnotherEpochGetsResetWithUnknownEpochAndEventsContinueFromTheResetId() throws Exception {
        int port = server.port();
        PushClient client = resources.newClient(options(port).topic("t").build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        publish(port, "t", 1, 3);
        Recorder.await("3 events", WAIT, () -> recorder.events.size() == 3);
        String oldEpoch = server.epoch();

        server.close();
        TestServers.wipe(dataDir); // the history is lost: the next server starts a new epoch
        server = TestServers.start(dataDir, port);
        assertThat(server.epoch()).isNotEqualTo(oldEpoch);
        publish(port, "t", 101, 102); // new history; the client resumes with <oldEpoch>-3
        Recorder.await("the reset", WAIT, () -> recorder.resets.size() == 1);
        publish(port, "t", 103, 104);
        EventId last = new EventId(server.epoch(), 4);
        Recorder.await("the last event", WAIT, () -> last.equals(client.lastId("t")));

        Recorder.Reset reset = recorder.resets.get(0);
        assertThat(reset.topic()).isEqualTo("t");
        assertThat(reset.reason()).isEqualTo(ResetReason.UNKNOWN_EPOCH);
        assertThat(reset.id().epoch()).isEqualTo(server.epoch());
        // Exactly the events after the reset's ID follow, in the new epoch. (The reset's ID is the
        // head when the client came back: 0, 1 or 2, depending on how fast it was.)
        List<Recorder.Event> after = recorder.events.subList(3, recorder.events.size());
        assertThat(after).extracting(e -> e.id().seq())
                .containsExactlyElementsOf(LongStream.rangeClosed(reset.id().seq() + 1, 4).boxed().toList());
        assertThat(after).extracting(e -> e.id().epoch()).containsOnly(server.epoch());
        assertThat(after).extracting(e -> e.data().path("n").asLong())
                .containsExactlyElementsOf(LongStream.rangeClosed(reset.id().seq() + 101, 104).boxed().toList());
        assertThat(client.resets()).isEqualTo(1);
        assertThat(client.epochMismatchesDropped()).isZero();
        assertThat(client.lastId("t")).isEqualTo(new EventId(server.epoch(), 4));
    }

    @Test
    void twoHundredClientsOnTwoSharedEventLoopsAllReceiveAPublishedEvent() throws Exception {
        int port = server.port();
        int n = 200;
        AtomicInteger subscribed = new AtomicInteger();
        AtomicInteger received = new AtomicInteger();
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        PushListener listener = new PushListener() {
            @Override
            public void onEvent(String topic, EventId id, long ts, com.fasterxml.jackson.databind.JsonNode data) {
                threads.add(Thread.currentThread());
                received.incrementAndGet();
            }

            @Override
            public void onReset(String topic, EventId id, ResetReason reason) {
            }

            @Override
            public void onSubscribed(String topic, EventId head, EventId oldest) {
                subscribed.incrementAndGet();
            }
        };
        PushClientOptions template = options(port).topic("fan").build();
        List<PushClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(resources.newClient(template, listener).start());
        }
        Recorder.await("200 subscriptions", WAIT, () -> subscribed.get() == n);
        Http.publish(port, "fan", "{\"hello\":\"all\"}");
        Recorder.await("200 deliveries", WAIT, () -> received.get() == n);

        assertThat(resources.clientCount()).isEqualTo(n);
        assertThat(threads).hasSizeLessThanOrEqualTo(2);
        assertThat(clients).allMatch(c -> c.eventsReceived() == 1 && c.connects() == 1);
        Thread.sleep(50);
        assertThat(received.get()).isEqualTo(n);
    }
}
