package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.Nginx;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.WsClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real nginx, configured from {@code config/nginx.conf.example}, in front of the packaged
 * server on loopback: WebSocket upgrades, events and the 1012 drain close pass through it, a
 * server restart behind it loses and duplicates nothing for clients that resume with their last
 * ID, SSE streams pass unbuffered (events, the drain's close event, Last-Event-ID resume), and
 * X-Forwarded-For reaches the server.
 *
 * <p>Skipped when no nginx is installed, unless {@code PUSH_REQUIRE_NGINX=true} (system property
 * or environment variable; {@code .ci/run} sets it), which turns the skip into a failure.
 */
class NginxIT {

    private static final int CLIENTS = 50;
    private static final String TOPIC = "nginx-it";
    private static final int BEFORE_RESTART = 20;
    private static final int AROUND_RESTART = 20;
    private static final Pattern RETRY_REASON = Pattern.compile("\\{\"retryMs\":\\d+}");

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    private Path nginxBinary;
    private Nginx nginx;
    private final List<WsClient> clients = new CopyOnWriteArrayList<>();
    private final List<WebSocket> rawSockets = new CopyOnWriteArrayList<>();
    private final List<SseStream> sseStreams = new CopyOnWriteArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @BeforeEach
    void findNginx() {
        nginxBinary = Nginx.binary();
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        for (WsClient c : clients) {
            c.socket().abort();
        }
        for (WebSocket ws : rawSockets) {
            ws.abort();
        }
        for (SseStream s : sseStreams) {
            s.close();
        }
        if (nginx != null) {
            nginx.close();
        }
        servers.killAll();
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void subscribersThroughNginxGetEveryEventExactlyOnceAcrossAServerRestart() throws Exception {
        Path data = tmp.resolve("data");
        int serverPort = ServerProcess.freePort();
        ServerProcess first = servers.start(tmp, serverPort, data, "drain.lbGrace=0s");
        int port = startNginx(serverPort);

        assertThat(Http.get(port, "/readyz").status()).as("/readyz through nginx (not public)").isEqualTo(404);
        assertThat(Http.get(serverPort, "/readyz").status()).as("/readyz on the instance").isEqualTo(200);

        // 50 subscribers through nginx, live only.
        List<Future<WsClient>> connecting = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            connecting.add(pool.submit(() -> {
                WsClient c = WsClient.connect(live(port, "topic=" + TOPIC + "&after="));
                clients.add(c);
                JsonNode subscribed = c.next(Duration.ofSeconds(10));
                assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                return c;
            }));
        }
        List<WsClient> subscribers = new ArrayList<>();
        for (Future<WsClient> f : connecting) {
            subscribers.add(f.get(30, TimeUnit.SECONDS));
        }

        // Publishes through nginx reach every subscriber through nginx, in order.
        List<String> acked = new ArrayList<>();
        for (int n = 1; n <= BEFORE_RESTART; n++) {
            Http.Response r = Http.publish(port, TOPIC, "{\"n\":" + n + "}", "k-" + n);
            assertThat(r.status()).as("publish " + n + " through nginx: " + r.body()).isEqualTo(201);
            acked.add(r.json().path("id").asText());
        }
        String[] lastSeen = new String[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            List<JsonNode> got = subscribers.get(i).awaitEvents(BEFORE_RESTART, Duration.ofSeconds(10));
            assertThat(got).extracting(m -> m.path("id").asText()).as("client " + i).containsExactlyElementsOf(acked);
            lastSeen[i] = got.get(got.size() - 1).path("id").asText();
        }
        // Some clients saw less: they resume from an earlier ID (as if they had missed frames).
        for (int i = 0; i < CLIENTS; i += 5) {
            lastSeen[i] = acked.get(i % BEFORE_RESTART);
        }

        // Restart the server behind nginx while a publisher keeps publishing through nginx.
        first.sigterm();
        AtomicInteger nextN = new AtomicInteger(BEFORE_RESTART + 1);
        Map<Integer, Integer> refusals = new ConcurrentHashMap<>();
        Map<Integer, String> aroundRestart = new ConcurrentHashMap<>();
        Future<?> publisher = pool.submit(() -> {
            for (int n = nextN.get(); n <= BEFORE_RESTART + AROUND_RESTART; n = nextN.incrementAndGet()) {
                aroundRestart.put(n, publishUntilAcked(port, n, refusals));
                Thread.sleep(100);
            }
            return null;
        });

        // Every subscriber gets the drain's 1012 through nginx, reason intact.
        List<String> reasons = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            WsClient c = subscribers.get(i);
            assertThat(c.awaitClose(Duration.ofSeconds(10))).as("close code through nginx, client " + i)
                    .isEqualTo(1012);
            OptionalLong retry = CloseCode.parseRetryMs(c.closeReason());
            assertThat(retry).as("retry hint in the close reason '" + c.closeReason() + "'").isPresent();
            assertThat(c.closeReason()).as("reason byte for byte as the server wrote it").matches(RETRY_REASON);
            reasons.add(c.closeReason());
        }
        assertThat(first.awaitExit(Duration.ofSeconds(15))).as("exit code after SIGTERM").isZero();
        int publishedWhileDown = nextN.get() - BEFORE_RESTART - 1; // acknowledged before the old server exited
        Thread.sleep(500); // a moment with no server at all behind nginx
        servers.start(tmp, serverPort, data);
        publisher.get(20, TimeUnit.SECONDS);
        for (int n = BEFORE_RESTART + 1; n <= BEFORE_RESTART + AROUND_RESTART; n++) {
            acked.add(aroundRestart.get(n));
        }
        assertThat(acked).as("acknowledged IDs").doesNotHaveDuplicates();
        assertThat(refusals).as("publish answers (status -> count) while the server was down or draining")
                .isNotEmpty();

        // Each client resumes through nginx from its last ID: every later event once, in order.
        List<Future<?>> resuming = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            int client = i;
            resuming.add(pool.submit(() -> {
                WsClient c = WsClient.connect(live(port, "topic=" + TOPIC + "@" + lastSeen[client]));
                clients.add(c);
                JsonNode subscribed = c.next(Duration.ofSeconds(10));
                assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                assertThat(subscribed.path("head").asText()).isEqualTo(acked.get(acked.size() - 1));
                List<String> expected = acked.subList(acked.indexOf(lastSeen[client]) + 1, acked.size());
                List<JsonNode> got = c.awaitEvents(expected.size(), Duration.ofSeconds(10));
                assertThat(got).extracting(m -> m.path("id").asText()).as("replay of client " + client)
                        .containsExactlyElementsOf(expected);
                return null;
            }));
        }
        for (Future<?> f : resuming) {
            f.get(30, TimeUnit.SECONDS);
        }
        List<WsClient> resumed = new ArrayList<>(clients.subList(CLIENTS, clients.size()));

        // ...then live again through nginx, nothing extra in between.
        Http.Response last = Http.publish(port, TOPIC, "{\"n\":\"last\"}", "k-last");
        assertThat(last.status()).isEqualTo(201);
        for (WsClient c : resumed) {
            JsonNode next = c.next(Duration.ofSeconds(5));
            assertThat(next.path("id").asText()).as("the next frame after the replay").isEqualTo(last.json()
                    .path("id").asText());
        }
        Thread.sleep(200);
        assertThat(resumed).allSatisfy(c -> assertThat(c.messages).as("frames after the last event").isEmpty());

        System.out.printf("nginx: %d clients closed with 1012 through nginx (reasons e.g. %s); %d publishes"
                        + " acknowledged before the old server exited; answers while it was away (status=count,"
                        + " all retried) %s; %d clients resumed exactly once%n",
                CLIENTS, reasons.subList(0, 3), publishedWhileDown, new TreeMap<>(refusals), CLIENTS);
    }

    @Test
    void forwardedForReachesTheServerThroughNginx() throws Exception {
        int serverPort = ServerProcess.freePort();
        servers.start(tmp, serverPort, tmp.resolve("data"), "drain.lbGrace=0s", "limits.maxConnectionsPerIp=2",
                "security.trustedProxies=127.0.0.1");
        int port = startNginx(serverPort);

        // The server counts connections per address from X-Forwarded-For because nginx (127.0.0.1)
        // is trusted; nginx appends the peer to what the client sent: "198.51.100.1, 127.0.0.1".
        URI uri = live(port, "topic=" + TOPIC);
        assertThat(rawConnect(uri, "198.51.100.1").next()).as("first from A").isEqualTo("subscribed");
        assertThat(rawConnect(uri, "198.51.100.1").next()).as("second from A").isEqualTo("subscribed");
        assertThat(rawConnect(uri, "198.51.100.1").next()).as("third from A: over the per-address limit")
                .isEqualTo("close 1013");
        assertThat(rawConnect(uri, "198.51.100.2").next()).as("first from B").isEqualTo("subscribed");

        String accessLog = Files.readString(nginx.dir().resolve("push-server.access.log"));
        assertThat(accessLog).as("nginx access log").contains("GET /v1/live?topic=" + TOPIC);
    }

    @Test
    void anSseStreamThroughNginxGetsEachEventAtOnceTheDrainsCloseEventAndResumesWithLastEventId()
            throws Exception {
        Path data = tmp.resolve("data");
        int serverPort = ServerProcess.freePort();
        ServerProcess first = servers.start(tmp, serverPort, data, "drain.lbGrace=0s");
        int port = startNginx(serverPort);

        SseStream s = sse(port, "topic=" + TOPIC);
        assertThat(s.status).isEqualTo(200);
        assertThat(s.header("content-type")).isEqualTo("text/event-stream; charset=utf-8");
        assertThat(s.header("x-accel-buffering")).as("used by nginx, not passed on").isNull();
        assertThat(s.next(Duration.ofSeconds(10)).retry()).isNotNull();
        assertThat(s.next(Duration.ofSeconds(10)).event()).isEqualTo("subscribed");
        // unbuffered: each event arrives before the next is published
        String lastId = null;
        for (int n = 1; n <= 5; n++) {
            lastId = Http.publish(port, TOPIC, "{\"n\":" + n + "}").json().path("id").asText();
            assertThat(s.events(1, Duration.ofSeconds(2))).extracting(SseStream.Message::id).containsExactly(lastId);
        }

        first.sigterm();
        SseStream.Message close = s.next(Duration.ofSeconds(10));
        assertThat(close.event()).isEqualTo("close");
        assertThat(close.data()).matches("\\{\"code\":1012,\"retryMs\":\\d+}");
        assertThat(close.retry()).isNotNull();
        assertThat(s.ended.get(10, TimeUnit.SECONDS)).as("the terminal chunk through nginx").isTrue();
        assertThat(first.awaitExit(Duration.ofSeconds(15))).isZero();

        servers.start(tmp, serverPort, data);
        List<String> missed = new ArrayList<>();
        for (int n = 6; n <= 8; n++) {
            missed.add(Http.publish(port, TOPIC, "{\"n\":" + n + "}").json().path("id").asText());
        }
        SseStream resumed = sse(port, "topic=" + TOPIC, "Last-Event-ID: " + lastId);
        assertThat(resumed.events(3, Duration.ofSeconds(10))).extracting(SseStream.Message::id)
                .containsExactlyElementsOf(missed);
        Thread.sleep(200);
        assertThat(resumed.messages).allSatisfy(m -> assertThat(m.data()).isNull()); // no event twice
    }

    // ---------------------------------------------------------------------------------------------

    private SseStream sse(int port, String query, String... headers) throws IOException {
        SseStream s = SseStream.open(port, query, headers);
        sseStreams.add(s);
        return s;
    }

    private int startNginx(int serverPort) throws IOException, InterruptedException {
        nginx = Nginx.start(nginxBinary, tmp, serverPort, TOPIC);
        return nginx.port();
    }


    private static URI live(int port, String query) {
        return URI.create("ws://127.0.0.1:" + port + "/v1/live?" + query);
    }

    /** Publishes event {@code n} until it is acknowledged (201, or 200 for a retry already stored). */
    private static String publishUntilAcked(int port, int n, Map<Integer, Integer> refusals)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
        while (System.nanoTime() < deadline) {
            int status;
            try {
                Http.Response r = Http.publish(port, TOPIC, "{\"n\":" + n + "}", "k-" + n);
                if (r.status() == 201 || r.status() == 200) {
                    return r.json().path("id").asText();
                }
                status = r.status();
            } catch (IllegalStateException e) {
                status = -1; // nginx itself unreachable: never expected
            }
            refusals.merge(status, 1, Integer::sum);
            Thread.sleep(50);
        }
        throw new AssertionError("publish " + n + " not acknowledged within 25 s; answers " + refusals);
    }

    /** A WebSocket through nginx with a client-sent X-Forwarded-For; yields frame types and closes. */
    private RawSocket rawConnect(URI uri, String forwardedFor) {
        RawSocket s = new RawSocket();
        WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                .header("X-Forwarded-For", forwardedFor)
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(uri, s)
                .orTimeout(10, TimeUnit.SECONDS)
                .join();
        rawSockets.add(ws);
        return s;
    }

    private static final class RawSocket implements WebSocket.Listener {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    events.add(ProtocolCodec.mapper().readTree(partial.toString()).path("type").asText());
                } catch (IOException e) {
                    events.add("bad json " + partial);
                }
                partial.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            events.add("close " + statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            events.add("error " + error);
        }

        String next() throws InterruptedException {
            String e = events.poll(10, TimeUnit.SECONDS);
            return e == null ? "nothing within 10 s" : e;
        }
    }
}
