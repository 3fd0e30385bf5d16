package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.client.testing.FakeServer;
import io.pushd.client.testing.Recorder;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Backoff, silence and close behaviour against a scripted server, with short delays. */
class ReconnectBehaviourTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Records what the client asked its backoff, and answers with a short full-jitter delay. */
    static final class RecordingBackoff implements Backoff {
        final List<Integer> attempts = new CopyOnWriteArrayList<>();
        final List<OptionalLong> hints = new CopyOnWriteArrayList<>();
        private final Backoff delegate = Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(80),
                Duration.ofSeconds(5), new Random(1));

        @Override
        public Duration nextDelay(int attempt, OptionalLong hintMillis) {
            attempts.add(attempt);
            hints.add(hintMillis);
            return delegate.nextDelay(attempt, hintMillis);
        }
    }

    ClientResources resources;
    FakeServer server;
    final Recorder recorder = new Recorder();
    final RecordingBackoff backoff = new RecordingBackoff();

    @BeforeEach
    void resources() {
        resources = ClientResources.create(1);
    }

    @AfterEach
    void stop() {
        resources.close();
        if (server != null) {
            server.close();
        }
    }

    private PushClient client(PushClientOptions.Builder b) {
        return resources.newClient(b.backoff(backoff).build(), recorder).start();
    }

    private PushClientOptions.Builder options() {
        return PushClientOptions.builder("127.0.0.1", server.port()).topic("a").topic("b");
    }

    @Test
    void onlyAConnectionThatStaysSubscribedResetsTheAttemptCounter() throws Exception {
        server = new FakeServer((n, ch) -> {
            FakeServer.subscribed(ch, "a");
            if (n >= 4) {
                FakeServer.subscribed(ch, "b"); // from the 4th connection on: every topic subscribed
            }
            if (n <= 4) {
                FakeServer.close(ch, 1011, "flapping"); // the 4th too, at once: a replay that fails, say
            }
        });
        PushClient client = client(options());

        Recorder.await("5 connections", WAIT, () -> server.connections() >= 5 && recorder.subscribed.size() >= 7);
        // 1-3 dropped before every topic was subscribed, the 4th right after: each a failure, so a
        // server that accepts and drops at once does not get every client back within 0-5 s
        assertThat(backoff.attempts).containsExactly(0, 1, 2, 3);
        // the 5th stays: once it has been subscribed for STABLE, the next close is a fresh start
        Recorder.await("a stable connection", WAIT, () -> client.failedAttempts() == 0);
        assertThat(backoff.hints).allMatch(OptionalLong::isEmpty);
        assertThat(client.failedAttempts()).isZero();
        assertThat(client.connects()).isEqualTo(5);
        assertThat(client.lastCloseCode()).isEqualTo(1011);
        assertThat(recorder.closes).extracting(Recorder.Close::code).containsExactly(1011, 1011, 1011, 1011);
        assertThat(server.requestUris).allMatch(u -> u.equals("/v1/live?topic=a@&topic=b@"));
        assertThat(client.state()).isEqualTo(ClientState.CONNECTED);
    }

    @Test
    void aRefusedConnectionCountsAsAFailedAttemptToo() throws Exception {
        server = new FakeServer((n, ch) -> { });
        int port = server.port();
        server.close(); // nothing listens there any more
        server = null;
        PushClient client = resources.newClient(PushClientOptions.builder("127.0.0.1", port).topic("a")
                .backoff(backoff).build(), recorder).start();

        Recorder.await("3 failed attempts", WAIT, () -> backoff.attempts.size() >= 3);
        assertThat(backoff.attempts.subList(0, 3)).containsExactly(0, 1, 2);
        assertThat(recorder.connectFailures).hasSizeGreaterThanOrEqualTo(3)
                .as("the listener hears why: refused, not just closed")
                .allMatch(e -> e instanceof java.net.ConnectException, "a ConnectException");
        assertThat(recorder.connected).isEmpty();
        assertThat(client.connects()).isZero();
        assertThat(client.connectAttempts()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void theRetryHintOfA1013IsTheFirstDelayAndIsWaitedFor() throws Exception {
        server = new FakeServer((n, ch) -> {
            FakeServer.subscribed(ch, "a");
            FakeServer.subscribed(ch, "b");
            if (n == 1) {
                FakeServer.close(ch, 1013, "{\"retryMs\":300}");
            }
        });
        PushClient client = client(options());

        Recorder.await("a reconnect", WAIT, () -> recorder.connected.size() >= 2);
        assertThat(backoff.attempts).containsExactly(0);
        assertThat(backoff.hints).containsExactly(OptionalLong.of(300));
        long waitedMillis = (recorder.connected.get(1) - recorder.closes.get(0).nanoTime()) / 1_000_000;
        assertThat(waitedMillis).isGreaterThanOrEqualTo(300);
        assertThat(client.lastCloseCode()).isEqualTo(1013);
        assertThat(client.lastCloseReason()).isEqualTo("{\"retryMs\":300}");
    }

    @Test
    void aSilentServerIsLeftAfterTheSilenceTimeoutAndTheClientReconnects() throws Exception {
        server = new FakeServer((n, ch) -> {
            FakeServer.subscribed(ch, "a");
            FakeServer.subscribed(ch, "b"); // and then not a byte more, not even a ping
        });
        client(options().silenceTimeout(Duration.ofMillis(300)));

        Recorder.await("a reconnect", WAIT, () -> recorder.connected.size() >= 2);
        Recorder.Close close = recorder.closes.get(0);
        assertThat(close.code()).isEqualTo(PushClient.ABNORMAL_CLOSURE);
        assertThat(close.reason()).isEqualTo("no frame for 300 ms");
        assertThat((close.nanoTime() - recorder.connected.get(0)) / 1_000_000).isGreaterThanOrEqualTo(300);
    }

    @Test
    void closeStopsReconnectingForGood() throws Exception {
        server = new FakeServer((n, ch) -> FakeServer.close(ch, 1011, "again"));
        PushClient client = resources.newClient(options().baseDelay(Duration.ofMillis(300))
                .maxDelay(Duration.ofMillis(300)).build(), recorder).start();

        Recorder.await("the first close", WAIT, () -> recorder.closes.size() >= 1);
        client.close();
        assertThat(client.state()).isEqualTo(ClientState.CLOSED);
        // a reconnect whose jittered delay was ~0 may already be connecting when close() runs: let it land
        // (the client closes it at once) before counting, so only attempts started after close() would show
        Thread.sleep(100);
        int connections = server.connections();
        Thread.sleep(700); // more than two delays
        assertThat(server.connections()).isEqualTo(connections);
        assertThat(client.state()).isEqualTo(ClientState.CLOSED);
        assertThat(resources.clientCount()).isZero();
    }

    @Test
    void theConfiguredLocalAddressIsTheSourceOfEveryConnection() throws Exception {
        server = new FakeServer((n, ch) -> {
            FakeServer.subscribed(ch, "a");
            FakeServer.subscribed(ch, "b");
            if (n == 1) {
                FakeServer.close(ch, 1012, "{\"retryMs\":0}");
            }
        });
        InetAddress source = InetAddress.getByName("127.0.0.2");
        client(options().localAddress(source));

        Recorder.await("a reconnect", WAIT, () -> server.connections() >= 2);
        assertThat(server.peers).extracting(InetSocketAddress::getAddress).containsOnly(source);
    }
}
