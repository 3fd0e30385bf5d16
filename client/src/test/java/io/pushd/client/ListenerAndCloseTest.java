package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.client.testing.FakeServer;
import io.pushd.client.testing.Http;
import io.pushd.client.testing.Recorder;
import io.pushd.client.testing.TestServers;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the application sees at the edges: nothing after {@code close()}, a listener that throws
 * (an {@link Error} too) changes nothing, an event the client cannot take is told and backed off
 * from, a server that keeps closing with 4001 is not hammered, and an empty token sends no header.
 */
class ListenerAndCloseTest {

    private static final Duration WAIT = Duration.ofSeconds(15);

    @TempDir
    Path dataDir;
    final ClientResources resources = ClientResources.create(1);
    PushServer server;

    @AfterEach
    void stop() {
        resources.close();
        if (server != null) {
            server.close();
        }
    }

    @Test
    void nothingReachesTheListenerAfterCloseNotEvenTheRestOfAReplayUnderWay() throws Exception {
        server = TestServers.start(dataDir);
        EventId first = null;
        for (int i = 1; i <= 300; i++) {
            EventId id = Http.publish(server.port(), "t", "{\"n\":" + i + "}");
            first = first == null ? id : first;
        }
        AtomicInteger afterClose = new AtomicInteger();
        AtomicReference<PushClient> client = new AtomicReference<>();
        Recorder recorder = new Recorder() {
            @Override
            public void onEvent(String topic, EventId id, long ts, JsonNode data) {
                super.onEvent(topic, id, ts, data);
                if (client.get().state() == ClientState.CLOSED) {
                    afterClose.incrementAndGet();
                }
                if (events.size() == 1) {
                    client.get().close(); // the other 299 are in the same read
                }
            }
        };
        client.set(resources.newClient(PushClientOptions.builder("127.0.0.1", server.port())
                .topic("t", new EventId(first.epoch(), 0)).build(), recorder));
        client.get().start();

        Recorder.await("the close", WAIT, () -> !recorder.closes.isEmpty());
        Thread.sleep(300);
        assertThat(afterClose).hasValue(0);
        assertThat(recorder.events).hasSize(1);
        assertThat(client.get().lastId("t")).isEqualTo(new EventId(first.epoch(), 1)); // the cursor stopped too
    }

    @Test
    void anErrorThrownByAListenerIsLoggedAndTheClientGoesOn() throws Exception {
        int port;
        try (ServerSocket nothing = new ServerSocket(0)) {
            port = nothing.getLocalPort(); // closed: nothing listens there
        }
        AtomicInteger failures = new AtomicInteger();
        Recorder recorder = new Recorder() {
            @Override
            public void onConnectFailed(Throwable cause) {
                failures.incrementAndGet();
                throw new AssertionError("a listener's bug");
            }
        };
        PushClient client = resources.newClient(PushClientOptions.builder("127.0.0.1", port).topic("t")
                .baseDelay(Duration.ofMillis(20)).maxDelay(Duration.ofMillis(40)).build(), recorder).start();

        // before, the Error escaped onClosed before the next attempt was scheduled: one attempt, for good
        // (an attempt is counted when it starts, its failure told when it fails: await the failures)
        Recorder.await("more failed attempts", WAIT, () -> failures.get() > 3);
        assertThat(client.connectAttempts()).isGreaterThan(3);
        assertThat(client.state()).isIn(ClientState.WAITING, ClientState.CONNECTING);
    }

    @Test
    void anEventLargerThanTheClientTakesIsToldToTheApplicationAndBackedOffFrom() throws Exception {
        server = TestServers.start(dataDir);
        List<String> errors = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder() {
            @Override
            public void onError(String code, String message) {
                errors.add(code);
            }
        };
        PushClient client = resources.newClient(PushClientOptions.builder("127.0.0.1", server.port()).topic("t")
                .topic("u").maxFrameBytes(1024).baseDelay(Duration.ofMillis(20)).maxDelay(Duration.ofSeconds(5))
                .build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 2);

        Http.publish(server.port(), "t", "{\"big\":\"" + "x".repeat(2000) + "\"}");
        Thread.sleep(3_000);

        assertThat(errors).contains("message_too_big");
        // every resume meets the same event: the attempts grow (20, 40, 80 ms, ...), where before
        // each connection got every topic subscribed, reset the counter, and came back at once:
        // 187 connections in these 3 s
        assertThat(client.connects()).isLessThan(15);
    }

    @Test
    void aServerThatKeepsClosingWith4001GetsTheBackoffNotATightLoop() throws Exception {
        try (FakeServer fake = new FakeServer((n, ch) -> {
            FakeServer.subscribed(ch, "a");
            FakeServer.close(ch, 4001, "token expired");
        })) {
            resources.newClient(PushClientOptions.builder("127.0.0.1", fake.port()).topic("a")
                    .accessToken(() -> "the-same-token").baseDelay(Duration.ofMillis(100)).build(), new Recorder())
                    .start();
            Thread.sleep(1_000);
            // once at once; after that the backoff (before: 393 connections in this second)
            assertThat(fake.connections()).isBetween(2, 10);
        }
    }

    @Test
    void overSseTooAServerThatKeepsClosingWith4001GetsTheBackoffItsRetryZeroIsNoHint() throws Exception {
        AtomicInteger connections = new AtomicInteger();
        try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread accept = new Thread(() -> {
                while (!listening.isClosed()) {
                    try (Socket s = listening.accept()) {
                        connections.incrementAndGet();
                        BufferedReader r = new BufferedReader(new InputStreamReader(s.getInputStream(),
                                StandardCharsets.US_ASCII));
                        for (String line; (line = r.readLine()) != null && !line.isEmpty(); ) {
                            // the request's head
                        }
                        // what the server sends at a token's expiry: retry 0, for a plain EventSource
                        String body = "retry: 0\nevent: subscribed\ndata: {\"type\":\"subscribed\",\"topic\":\"a\","
                                + "\"head\":null,\"oldest\":null}\n\nretry: 0\nevent: close\n"
                                + "data: {\"code\":4001,\"retryMs\":0}\n\n";
                        s.getOutputStream().write(("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                + "connection: close\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "fake-sse");
            accept.setDaemon(true);
            accept.start();
            resources.newClient(PushClientOptions.builder("127.0.0.1", listening.getLocalPort()).topic("a")
                    .transport(Transport.SSE).accessToken(() -> "the-same-token").baseDelay(Duration.ofMillis(100))
                    .build(), new Recorder()).start();
            Thread.sleep(1_000);
            assertThat(connections.get()).isBetween(2, 10);
        }
    }

    @Test
    void anEmptyTokenSendsNoAuthorizationHeaderOverSse() throws Exception {
        List<String> authorization = new CopyOnWriteArrayList<>();
        try (ServerSocket listening = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread accept = new Thread(() -> {
                try (Socket s = listening.accept()) {
                    BufferedReader r = new BufferedReader(new InputStreamReader(s.getInputStream(),
                            StandardCharsets.US_ASCII));
                    for (String line; (line = r.readLine()) != null && !line.isEmpty(); ) {
                        if (line.toLowerCase(Locale.ROOT).startsWith("authorization")) {
                            authorization.add(line);
                        }
                    }
                    s.getOutputStream().write("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                } catch (Exception ignored) {
                    // the test reads what was recorded
                }
            });
            accept.start();
            resources.newClient(PushClientOptions.builder("127.0.0.1", listening.getLocalPort()).topic("a")
                    .transport(Transport.SSE).accessToken(() -> "").baseDelay(Duration.ofSeconds(5)).build(),
                    new Recorder()).start();
            accept.join(5_000);
        }
        assertThat(authorization).isEmpty(); // "a null or empty answer sends none", as over WebSocket
    }
}
