package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.client.testing.Http;
import io.pushd.client.testing.Recorder;
import io.pushd.client.testing.SseTestServer;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client over server-sent events against a real server: the in-process one (skipped, with a
 * message, while it has no {@code GET /v1/sse}), or the fat jar named by
 * {@code -Dpush.sse.server.jar}, as a child process.
 */
class SseTransportTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;
    SseTestServer server;
    ClientResources resources;
    final Recorder recorder = new Recorder();
    /** {attempt, hint or -1, delay ms} of every backoff decision. */
    final List<long[]> chosen = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = SseTestServer.start(tmp.resolve("data"));
        Assumptions.assumeTrue(server.servesSse(), () -> "skipped: " + server.describe()
                + " answers GET /v1/sse with 404 (no SSE transport yet; it turns on once the server has it, or run "
                + "with -D" + SseTestServer.JAR_PROPERTY + "=<a fat jar with SSE>)");
        resources = ClientResources.create(2);
    }

    @AfterEach
    void stop() throws Exception {
        if (resources != null) {
            resources.close();
        }
        server.close();
    }

    private PushClientOptions.Builder options() {
        Backoff base = Backoff.exponential(Duration.ofMillis(100), Duration.ofMillis(400), Duration.ofSeconds(10), null);
        return PushClientOptions.builder("127.0.0.1", server.port()).transport(Transport.SSE)
                .backoff((attempt, hint) -> {
                    Duration d = base.nextDelay(attempt, hint);
                    chosen.add(new long[] {attempt, hint.orElse(-1), d.toMillis()});
                    return d;
                });
    }

    private void publish(String topic, int from, int to) {
        for (int i = from; i <= to; i++) {
            Http.publish(server.port(), topic, "{\"n\":" + i + "}");
        }
    }

    private List<Long> seqs(String topic) {
        return recorder.events.stream().filter(e -> e.topic().equals(topic)).map(e -> e.id().seq()).toList();
    }

    private List<Long> payloads(String topic) {
        return recorder.events.stream().filter(e -> e.topic().equals(topic)).map(e -> e.data().path("n").asLong())
                .toList();
    }

    @Test
    void twoTopicsOverSseGetEveryEventOnceInOrderAcrossADrainAndTheCloseEventsHintIsWaited() throws Exception {
        PushClient client = resources.newClient(options().topic("a").topic("b").build(), recorder).start();
        Recorder.await("both subscribed", WAIT, () -> recorder.subscribed.size() == 2);
        assertThat(client.state()).isEqualTo(ClientState.CONNECTED);
        publish("a", 1, 5);
        publish("b", 1, 3);
        Recorder.await("8 events", WAIT, () -> recorder.events.size() == 8);

        server.drain();
        Recorder.await("the close", WAIT, () -> recorder.closes.size() == 1);
        server.startAgain();
        publish("a", 6, 10); // while the client waits its hint: replayed from disk on resume
        Recorder.await("the reconnect", WAIT, () -> recorder.connected.size() == 2);
        publish("b", 4, 6); // live
        Recorder.await("16 events", WAIT, () -> recorder.events.size() >= 16);

        Recorder.Close close = recorder.closes.get(0);
        assertThat(close.code()).isEqualTo(CloseCode.SERVICE_RESTART.code());
        long hint = CloseCode.parseRetryMs(close.reason()).orElseThrow();
        assertThat(chosen.get(0)).containsExactly(0, hint, hint);
        assertThat((recorder.connected.get(1) - close.nanoTime()) / 1_000_000).isGreaterThanOrEqualTo(hint);
        assertThat(seqs("a")).containsExactlyElementsOf(LongStream.rangeClosed(1, 10).boxed().toList());
        assertThat(seqs("b")).containsExactlyElementsOf(LongStream.rangeClosed(1, 6).boxed().toList());
        // Each event carries its own payload; across topics the protocol promises no order (README,
        // "Ordering guarantee"), so a's fifth event may follow b's first even though it was published first.
        assertThat(payloads("a")).containsExactlyElementsOf(LongStream.rangeClosed(1, 10).boxed().toList());
        assertThat(payloads("b")).containsExactlyElementsOf(LongStream.rangeClosed(1, 6).boxed().toList());
        assertThat(client.duplicatesDropped() + client.gaps() + client.resets()).isZero();
        assertThat(client.lastCloseCode()).isEqualTo(1012);
        Recorder.await("reset once every topic has been subscribed again for PushClient.STABLE", WAIT,
                () -> client.failedAttempts() == 0);
    }

    @Test
    void afterACrashTheStreamsRetryFieldIsTheFirstDelayAndNothingIsLostOrRepeated() throws Exception {
        PushClient client = resources.newClient(options().topic("t").build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        publish("t", 1, 4);
        Recorder.await("4 events", WAIT, () -> recorder.events.size() == 4);

        server.crash();
        Recorder.await("the disconnect", WAIT, () -> recorder.closes.size() == 1);
        server.startAgain();
        publish("t", 5, 8);
        Recorder.await("8 events", WAIT, () -> recorder.events.size() >= 8);

        // retry: is drawn per stream in [1 s, drain.minWindow]; a close event (in-process close)
        // carries one too: either way the server's number, not the client's own jitter, comes first.
        long[] first = chosen.get(0);
        assertThat(first[0]).isZero();
        assertThat(first[1]).isBetween(1_000L, 10_000L);
        assertThat(first[2]).isEqualTo(first[1]);
        assertThat(seqs("t")).containsExactlyElementsOf(LongStream.rangeClosed(1, 8).boxed().toList());
        assertThat(client.duplicatesDropped() + client.gaps() + client.resets()).isZero();
        assertThat(client.lastId("t").seq()).isEqualTo(8);
    }

    @Test
    void aStartingIdReplaysTheKeptEventsAfterItThenLiveAndCloseEndsTheStream() throws Exception {
        EventId second = null;
        for (int i = 1; i <= 5; i++) {
            EventId id = Http.publish(server.port(), "r", "{\"n\":" + i + "}");
            if (i == 2) {
                second = id;
            }
        }
        PushClient client = resources.newClient(options().topic("r", second).build(), recorder).start();
        Recorder.await("3 replayed events", WAIT, () -> recorder.events.size() == 3);
        publish("r", 6, 6);
        Recorder.await("the live event", WAIT, () -> recorder.events.size() == 4);
        assertThat(seqs("r")).containsExactly(3L, 4L, 5L, 6L);

        client.close();
        assertThat(client.state()).isEqualTo(ClientState.CLOSED);
        Recorder.await("the close", WAIT, () -> recorder.closes.size() == 1);
        assertThat(recorder.closes.get(0).code()).isEqualTo(CloseCode.NORMAL.code());
        Thread.sleep(300);
        assertThat(recorder.connected).as("no reconnect after close()").hasSize(1);
    }
}
