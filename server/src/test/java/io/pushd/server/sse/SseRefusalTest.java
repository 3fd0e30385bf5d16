package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How SSE streams are sent away: always 200 + {@code retry:} + {@code event: close} + the end of
 * the response (a non-200 would make a browser's EventSource give up for good), with hints spread
 * like the WebSocket ones; and the slow-consumer guard.
 */
class SseRefusalTest {

    static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dataDir;
    PushServer server;
    final List<SseStream> streams = new ArrayList<>();

    void start(UnaryOperator<ServerConfig> tweak) throws Exception {
        server = TestServers.start(tweak.apply(TestServers.config(dataDir)));
    }

    SseStream open(String query) throws Exception {
        SseStream s = SseStream.open(server.port(), query);
        streams.add(s);
        return s;
    }

    @AfterEach
    void stop() {
        streams.forEach(SseStream::close);
        if (server != null) {
            server.close();
        }
    }

    /** The close event's {code, retryMs} (see {@link SseStream#closeEvent}). */
    static long[] closeOf(SseStream s) throws Exception {
        return s.closeEvent(WAIT);
    }

    @Test
    void theDrainEndsEveryStreamWithA1012CloseEventSpreadOverTheWindowAnd200ForLateComers() throws Exception {
        start(c -> c);
        List<SseStream> open = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            SseStream s = open("topic=t" + (i % 4));
            s.next(WAIT);
            s.next(WAIT); // subscribed: admitted
            open.add(s);
        }
        CompletableFuture<Void> drain = CompletableFuture.runAsync(server::drain);
        List<Long> hints = new ArrayList<>();
        for (SseStream s : open) {
            long[] close = closeOf(s);
            assertThat(close[0]).isEqualTo(1012);
            hints.add(close[1]);
        }
        // the drain waits for the streams above (held open here); a stream asked for now is sent away too
        SseStream late = open("topic=t0");
        assertThat(late.status).isEqualTo(200);
        assertThat(late.next(WAIT).retry()).isNotNull();
        assertThat(closeOf(late)[0]).isEqualTo(1012);
        // returns planned over the drain's second of closes plus the 5 s window
        assertThat(hints).allSatisfy(h -> assertThat(h).isBetween(0L, 6_000L));
        assertThat(hints.stream().distinct().count()).isGreaterThan(30);
        assertThat(hints.stream().mapToLong(Long::longValue).max().getAsLong()
                - hints.stream().mapToLong(Long::longValue).min().getAsLong()).isGreaterThan(2_500);
        streams.forEach(SseStream::close);
        drain.get(30, TimeUnit.SECONDS);
    }

    @Test
    void overMaxConnectionsAStreamGets200RetryAndA1013CloseEventNeverA503() throws Exception {
        start(c -> c.withLimits(c.limits().withMaxConnections(1)));
        SseStream admitted = open("topic=t");
        admitted.next(WAIT);
        assertThat(admitted.next(WAIT).event()).isEqualTo("subscribed");
        SseStream refused = open("topic=t");
        assertThat(refused.status).isEqualTo(200);
        assertThat(refused.next(WAIT).retry()).isBetween(1_000L, 5_000L);
        long[] close = closeOf(refused);
        assertThat(close[0]).isEqualTo(1013);
        assertThat(close[1]).isBetween(500L, 60_000L);
        String metrics = Http.get(server.port(), "/metrics").body();
        assertThat(metrics).contains("push_handshakes_total{outcome=\"refused_connections\",transport=\"sse\"} 1.0",
                "push_handshakes_total{outcome=\"admitted\",transport=\"sse\"} 1.0",
                "push_connections{transport=\"sse\"} 1.0", "push_closes_sent_total{code=\"1013\"} 1.0");
    }

    @Test
    void theStartUpRampSendsStreamsAwayWith200AndA1013Hint() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "200"); // the previous run had 200 clients
        start(c -> c);
        // At once, as a herd comes: opened one after another, 40 streams take longer on a busy
        // machine than the ramp's pace (200 over the window), and every one is admitted.
        List<java.util.concurrent.Future<SseStream>> opening = new ArrayList<>();
        java.util.concurrent.ExecutorService herd = java.util.concurrent.Executors.newFixedThreadPool(40);
        try {
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            for (int i = 0; i < 40; i++) {
                opening.add(herd.submit(() -> {
                    go.await();
                    return SseStream.open(server.port(), "topic=t");
                }));
            }
            go.countDown();
            for (java.util.concurrent.Future<SseStream> f : opening) {
                streams.add(f.get(30, TimeUnit.SECONDS));
            }
        } finally {
            herd.shutdownNow();
        }
        int refused = 0;
        for (java.util.concurrent.Future<SseStream> f : opening) {
            SseStream s = f.get();
            assertThat(s.status).isEqualTo(200);
            s.next(WAIT); // retry:
            SseStream.Message m = s.next(WAIT);
            if ("close".equals(m.event())) {
                refused++;
                assertThat(m.data()).startsWith("{\"code\":1013,");
                assertThat(s.ended.get(5, TimeUnit.SECONDS)).isTrue();
            } else {
                assertThat(m.event()).isEqualTo("subscribed");
            }
        }
        assertThat(refused).isPositive();
        assertThat(Http.get(server.port(), "/metrics").body())
                .containsPattern("push_handshakes_total\\{outcome=\"refused_startup_ramp\",transport=\"sse\"} [1-9]");
    }

    @Test
    void theFirstRetryIsJitteredPerStreamOverOneSecondToTheDrainWindow() throws Exception {
        start(c -> c);
        List<Long> retries = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            try (SseStream s = SseStream.open(server.port(), "topic=t")) {
                retries.add(s.next(WAIT).retry());
            }
        }
        assertThat(retries).allSatisfy(r -> assertThat(r).isBetween(1_000L, 5_000L));
        long[] quarters = new long[4]; // 1-2 s, 2-3 s, 3-4 s, 4-5 s: uniform gives ~50 each
        retries.forEach(r -> quarters[(int) Math.min(3, (r - 1_000) / 1_000)]++);
        assertThat(java.util.Arrays.stream(quarters).boxed().toList())
                .allSatisfy(q -> assertThat(q).isBetween(20L, 90L));
    }

    @Test
    void aStreamThatDoesNotReadIsClosedAsASlowConsumer() throws Exception {
        start(c -> c.withLimits(c.limits().toBuilder().slowConsumerTimeout(Duration.ofMillis(500)).build()));
        SseStream reader = open("topic=big");
        reader.next(WAIT);
        reader.next(WAIT);
        java.net.Socket stuck = new java.net.Socket("127.0.0.1", server.port());
        stuck.setReceiveBufferSize(4096);
        stuck.getOutputStream().write("GET /v1/sse?topic=big HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.liveConnections() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        String payload = "\"" + "x".repeat(60_000) + "\"";
        while (!Http.get(server.port(), "/metrics").body().contains("push_slow_consumer_closes_total 1.0")
                && System.nanoTime() < deadline + WAIT.toNanos()) {
            for (int i = 0; i < 20; i++) {
                Http.publish(server.port(), "big", payload);
            }
        }
        assertThat(Http.get(server.port(), "/metrics").body()).contains("push_slow_consumer_closes_total 1.0");
        // and the connection really goes, although the client still does not read (nor close): the
        // end of its response can never be written, so only the server's own timeout ends it
        long closeBy = System.nanoTime() + Duration.ofMillis(SseSink.FORCE_CLOSE_MILLIS + 5_000).toNanos();
        while (server.liveConnections() > 1 && System.nanoTime() < closeBy) {
            Thread.sleep(20);
        }
        assertThat(server.liveConnections()).as("the stuck stream's connection is gone").isEqualTo(1);
        stuck.close();
        assertThat(reader.messages).isNotEmpty(); // the reading stream went on getting events
    }
}
