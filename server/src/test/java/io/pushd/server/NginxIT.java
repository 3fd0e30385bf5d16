package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import io.pushd.server.testing.WsClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real nginx, configured from {@code config/nginx.conf.example}, in front of the packaged
 * server on loopback: WebSocket upgrades, events and the 1012 drain close pass through it, a
 * server restart behind it loses and duplicates nothing for clients that resume with their last
 * ID, and X-Forwarded-For reaches the server.
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
    private Process nginx;
    private Path nginxDir;
    private final List<WsClient> clients = new CopyOnWriteArrayList<>();
    private final List<WebSocket> rawSockets = new CopyOnWriteArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @BeforeEach
    void findNginx() {
        nginxBinary = Stream.concat(Stream.of(Path.of("/usr/sbin/nginx")),
                        Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                                .filter(d -> !d.isEmpty()).map(d -> Path.of(d, "nginx")))
                .filter(Files::isExecutable).findFirst().orElse(null);
        if (nginxBinary == null) {
            String message = "nginx not found (neither /usr/sbin/nginx nor on PATH); install the Debian package"
                    + " `nginx` to run this test";
            String require = System.getProperty("PUSH_REQUIRE_NGINX", System.getenv("PUSH_REQUIRE_NGINX"));
            if ("true".equalsIgnoreCase(require)) {
                throw new AssertionError(message + " (PUSH_REQUIRE_NGINX=true: not skipping)");
            }
            Assumptions.abort(message);
        }
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        for (WsClient c : clients) {
            c.socket().abort();
        }
        for (WebSocket ws : rawSockets) {
            ws.abort();
        }
        if (nginx != null && nginx.isAlive()) {
            nginx.destroy(); // SIGTERM: nginx's fast shutdown, master and workers
            if (!nginx.waitFor(5, TimeUnit.SECONDS)) {
                nginx.descendants().forEach(ProcessHandle::destroyForcibly);
                nginx.destroyForcibly();
                nginx.waitFor(5, TimeUnit.SECONDS);
            }
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

        String accessLog = Files.readString(nginxDir.resolve("push-server.access.log"));
        assertThat(accessLog).as("nginx access log").contains("GET /v1/live?topic=" + TOPIC);
    }

    // ---------------------------------------------------------------------------------------------

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

    /**
     * Writes {@code config/nginx.conf.example} with loopback ports and temp paths into a temp
     * dir, wraps it in a minimal main config, runs nginx in the foreground and waits until it
     * proxies.
     */
    private int startNginx(int serverPort) throws IOException, InterruptedException {
        nginxDir = Files.createDirectories(tmp.resolve("nginx"));
        int port = ServerProcess.freePort();
        Path example = Path.of(System.getProperty("user.dir")).resolve("../config/nginx.conf.example").normalize();
        assertThat(example).as("the example config (the module dir is the working directory)").isRegularFile();
        String site = Files.readString(example, StandardCharsets.UTF_8);
        site = replaceAll(site, "(?m)^(\\s*)server\\s+[0-9A-Za-z.\\-\\[\\]:]+:\\d+",
                "$1server 127.0.0.1:" + serverPort, 1, "upstream server line");
        site = replaceAll(site, "(?m)^(\\s*)listen\\s+[^;]+;", "$1listen 127.0.0.1:" + port + ";", 1, "listen line");
        site = replaceAll(site, "/var/log/nginx/", Matcher.quoteReplacement(nginxDir + "/"), 1, "log path");
        Files.writeString(nginxDir.resolve("push-server.conf"), site);

        String d = nginxDir.toString();
        String main = (isRoot() ? "user root;\n" : "") // else the workers run as nobody: no access to the temp dir
                + "worker_processes 1;\n"
                + "error_log " + d + "/error.log info;\n"
                + "events { worker_connections 1024; }\n"
                + "http {\n"
                + "    client_body_temp_path " + d + "/client_body;\n"
                + "    proxy_temp_path " + d + "/proxy;\n"
                + "    fastcgi_temp_path " + d + "/fastcgi;\n"
                + "    uwsgi_temp_path " + d + "/uwsgi;\n"
                + "    scgi_temp_path " + d + "/scgi;\n"
                + "    access_log " + d + "/access.log;\n"
                + "    include " + d + "/push-server.conf;\n"
                + "}\n";
        Files.writeString(nginxDir.resolve("nginx.conf"), main);

        nginx = new ProcessBuilder(nginxBinary.toString(), "-p", d + "/", "-c", d + "/nginx.conf", "-e", d + "/error.log",
                "-g", "daemon off; pid " + d + "/nginx.pid;")
                .redirectErrorStream(true)
                .redirectOutput(nginxDir.resolve("nginx.out").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            if (!nginx.isAlive()) {
                throw new AssertionError("nginx exited with " + nginx.exitValue() + ":\n" + nginxLogs());
            }
            try {
                if (Http.get(port, "/v1/topics/" + TOPIC).status() == 200) {
                    return port;
                }
            } catch (IllegalStateException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("nginx did not proxy within 10 s:\n" + nginxLogs());
            }
            Thread.sleep(100);
        }
    }

    private String nginxLogs() {
        StringBuilder b = new StringBuilder();
        for (String f : List.of("nginx.out", "error.log")) {
            try {
                b.append("--- ").append(f).append(":\n").append(Files.readString(nginxDir.resolve(f)));
            } catch (IOException e) {
                b.append("--- ").append(f).append(": ").append(e).append('\n');
            }
        }
        return b.toString();
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static String replaceAll(String text, String regex, String replacement, int atLeast, String what) {
        Matcher m = Pattern.compile(regex).matcher(text);
        int count = 0;
        while (m.find()) {
            count++;
        }
        assertThat(count).as(what + " in config/nginx.conf.example (the test templates it)").isGreaterThanOrEqualTo(
                atLeast);
        return m.replaceAll(replacement);
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
