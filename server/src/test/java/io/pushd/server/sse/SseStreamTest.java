package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /v1/sse} over real sockets: IDs, cursors, Last-Event-ID, heartbeats, one-way input. */
class SseStreamTest {

    static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dataDir;
    PushServer server;
    final List<SseStream> streams = new ArrayList<>();

    void start(UnaryOperator<ServerConfig> tweak) throws Exception {
        server = TestServers.start(tweak.apply(TestServers.config(dataDir)));
    }

    SseStream open(String query, String... headers) throws Exception {
        SseStream s = SseStream.open(server.port(), query, headers);
        streams.add(s);
        return s;
    }

    String publish(String topic, String json) {
        return Http.publish(server.port(), topic, json).json().path("id").asText();
    }

    @AfterEach
    void stop() {
        streams.forEach(SseStream::close);
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aStreamIsChunkedEventStreamThatStartsWithRetryAndGivesEveryEventItsIdAsTheSseId() throws Exception {
        start(c -> c);
        SseStream s = open("topic=t");
        assertThat(s.status).isEqualTo(200);
        assertThat(s.header("content-type")).isEqualTo("text/event-stream; charset=utf-8");
        assertThat(s.header("cache-control")).isEqualTo("no-store");
        assertThat(s.header("x-accel-buffering")).isEqualTo("no");
        assertThat(s.header("transfer-encoding")).isEqualTo("chunked");
        SseStream.Message first = s.next(WAIT);
        assertThat(first.retry()).isBetween(1_000L, 5_000L);
        assertThat(first.data()).isNull();
        SseStream.Message subscribed = s.next(WAIT);
        assertThat(subscribed.event()).isEqualTo("subscribed");
        assertThat(subscribed.id()).isEqualTo(server.epoch() + "-0"); // live only, empty topic: before its first event
        assertThat(subscribed.json().path("type").asText()).isEqualTo("subscribed");
        String a = publish("t", "{\"n\":1}");
        String b = publish("t", "{\"n\":2}");
        List<SseStream.Message> events = s.events(2, WAIT);
        assertThat(events).extracting(SseStream.Message::id).containsExactly(a, b);
        JsonNode frame = events.get(0).json();
        assertThat(frame.path("type").asText()).isEqualTo("event");
        assertThat(frame.path("id").asText()).isEqualTo(a);
        assertThat(frame.path("data").path("n").asInt()).isEqualTo(1);
        assertThat(s.splitMessages).isZero();
    }

    @Test
    void severalTopicsCarryACursorThatResumesEveryTopicExactlyOnceAsLastEventId() throws Exception {
        start(c -> c);
        String e = server.epoch();
        publish("a", "1");
        SseStream s = open("topic=a&topic=b");
        s.next(WAIT);
        assertThat(s.next(WAIT).id()).isEqualTo("a@" + e + "-1");
        assertThat(s.next(WAIT).id()).isEqualTo("a@" + e + "-1,b@" + e + "-0");
        publish("b", "2");
        publish("a", "3");
        List<SseStream.Message> got = s.events(2, WAIT);
        assertThat(got).extracting(SseStream.Message::id)
                .containsExactly("a@" + e + "-1,b@" + e + "-1", "a@" + e + "-2,b@" + e + "-1");
        assertThat(got.get(1).json().path("topic").asText()).isEqualTo("a");
        assertThat(s.splitMessages).isZero();
        s.close();

        publish("a", "4");
        publish("b", "5");
        // the query says live only; the cursor wins and resumes both topics where the stream was
        SseStream resumed = open("topic=a&topic=b", "Last-Event-ID: " + got.get(1).id());
        List<SseStream.Message> replayed = resumed.events(2, WAIT);
        assertThat(replayed).extracting(m -> m.json().path("topic").asText() + ":" + m.json().path("data").asText())
                .containsExactlyInAnyOrder("a:4", "b:5");
        assertThat(replayed.get(1).id()).isEqualTo("a@" + e + "-3,b@" + e + "-2");
        assertThat(resumed.messages.poll(300, TimeUnit.MILLISECONDS)).isNull(); // nothing twice
    }

    @Test
    void aCursorOfAHundredLongTopicNamesIsTakenBackAsLastEventId() throws Exception {
        start(c -> c);
        String e = server.epoch();
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            topics.add(String.format("%03d-", i) + "n".repeat(68)); // 72 characters: the id: line passes 8 KiB
        }
        SseStream s = open(topics.stream().map(t -> "topic=" + t).collect(java.util.stream.Collectors.joining("&")));
        for (int i = 0; i <= 100; i++) {
            s.next(WAIT); // retry:, then the subscribed of each topic
        }
        for (String t : topics) {
            publish(t, "1");
        }
        List<SseStream.Message> got = s.events(100, WAIT);
        String cursor = got.get(99).id();
        assertThat(cursor.length()).isGreaterThan(8 * 1024);
        s.close();
        publish(topics.get(7), "2");

        SseStream resumed = open(topics.stream().map(t -> "topic=" + t).collect(java.util.stream.Collectors.joining("&")),
                "Last-Event-ID: " + cursor);
        SseStream.Message next = resumed.events(1, WAIT).get(0);
        assertThat(next.json().path("id").asText()).isEqualTo(e + "-2");
        assertThat(next.json().path("topic").asText()).isEqualTo(topics.get(7));
    }

    @Test
    void aStreamWhoseCursorCouldOutgrowWhatAResumeMaySendIsRefusedAtItsStart() throws Exception {
        start(c -> c.withLimits(c.limits().toBuilder().maxTopicsPerConnection(1000).build()));
        String query = java.util.stream.IntStream.range(0, 300).mapToObj(i -> "topic=" + String.format("%03d-", i)
                + "n".repeat(196)).collect(java.util.stream.Collectors.joining("&"));
        Http.Response r = Http.get(server.port(), "/v1/sse?" + query);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().path("error").asText()).isEqualTo("too_many_topics");
    }

    @Test
    void lastEventIdWinsOverTheQueryAndResumesExactlyOnceAcrossARestartOnTheSameDataDirectory() throws Exception {
        start(c -> c);
        String e = server.epoch();
        for (int i = 1; i <= 3; i++) {
            publish("t", Integer.toString(i));
        }
        SseStream s = open("topic=t@" + e + "-0", "Last-Event-ID: " + e + "-2");
        assertThat(s.events(1, WAIT)).extracting(SseStream.Message::id).containsExactly(e + "-3");
        s.close();
        server.close();

        server = TestServers.start(TestServers.config(dataDir)); // same data dir: same epoch, same IDs
        assertThat(server.epoch()).isEqualTo(e);
        publish("t", "4");
        SseStream after = open("topic=t", "Last-Event-ID: " + e + "-3");
        after.next(WAIT); // retry
        assertThat(after.next(WAIT).id()).isEqualTo(e + "-3"); // subscribed: where the stream resumes
        assertThat(after.events(1, WAIT)).extracting(SseStream.Message::id).containsExactly(e + "-4");
        assertThat(after.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aLongReplayComesInOrderOnceWithEveryMessageWholeInItsChunk() throws Exception {
        start(c -> c);
        String e = server.epoch();
        int n = 2_000;
        for (int i = 1; i <= n; i++) {
            publish("t", "{\"n\":" + i + ",\"s\":\"é✓\"}");
        }
        SseStream s = open("topic=t@" + e + "-0");
        List<SseStream.Message> got = s.events(n, WAIT);
        for (int i = 0; i < n; i++) {
            SseStream.Message m = got.get(i);
            assertThat(m.id()).isEqualTo(e + "-" + (i + 1));
            JsonNode frame = m.json();
            assertThat(frame.path("id").asText()).isEqualTo(m.id());
            assertThat(frame.path("topic").asText()).isEqualTo("t");
            assertThat(frame.path("data").path("n").asInt()).isEqualTo(i + 1);
            assertThat(frame.path("data").path("s").asText()).isEqualTo("é✓");
        }
        assertThat(s.splitMessages).isZero();
        assertThat(s.chunks).as("a chunk per message: retry, subscribed, the events").isEqualTo(n + 2);
        assertThat(s.messages.poll(300, TimeUnit.MILLISECONDS)).isNull(); // nothing twice
    }

    @Test
    void aStreamThatFallsBehindGetsEveryEventOnceAndWholeWhenItReadsAgain() throws Exception {
        start(c -> c);
        String e = server.epoch();
        SseStream s = SseStream.openPaused(server.port(), "topic=t@" + e + "-0");
        streams.add(s);
        fallBehindAndCatchUp(s, i -> e + "-" + i);
    }

    @Test
    void aMultiTopicStreamThatFallsBehindGetsEveryEventOnceAndWholeWithItsCursor() throws Exception {
        start(c -> c);
        String e = server.epoch();
        // nothing to replay: live at once. Its chunks are built per stream and sent straight to the
        // socket while it keeps up, and the rest of a partly sent one through Netty when it does not
        SseStream s = SseStream.openPaused(server.port(), "topic=t@" + e + "-0&topic=quiet@" + e + "-0");
        streams.add(s);
        fallBehindAndCatchUp(s, i -> "t@" + e + "-" + i + ",quiet@" + e + "-0");
    }

    /**
     * Publishes ~12 MB to topic t while {@code s} does not read (more than loopback's send and
     * receive buffers hold, so the writes find the socket full), then lets it read: every event
     * once, in order, whole, event {@code i} with {@code id: idOf(i)}.
     */
    private void fallBehindAndCatchUp(SseStream s, java.util.function.IntFunction<String> idOf) throws Exception {
        String pad = "x".repeat(40_000);
        int n = 300;
        for (int i = 1; i <= n; i++) {
            publish("t", "{\"i\":" + i + ",\"pad\":\"" + pad + "\"}");
        }
        s.resume();
        List<SseStream.Message> got = s.events(n, WAIT);
        for (int i = 0; i < n; i++) {
            assertThat(got.get(i).id()).isEqualTo(idOf.apply(i + 1));
            assertThat(got.get(i).json().path("data").path("i").asInt()).isEqualTo(i + 1);
            assertThat(got.get(i).json().path("data").path("pad").asText()).hasSize(40_000);
        }
        assertThat(s.splitMessages).isZero();
        assertThat(s.messages.poll(300, TimeUnit.MILLISECONDS)).isNull(); // nothing twice
    }

    @Test
    void anHttp10StreamReplaysToo() throws Exception {
        start(c -> c);
        String e = server.epoch();
        for (int i = 1; i <= 300; i++) {
            publish("t", Integer.toString(i));
        }
        SseStream s = SseStream.send(server.port(), "GET /v1/sse?topic=t@" + e + "-100 HTTP/1.0\r\n\r\n");
        streams.add(s);
        assertThat(s.events(200, WAIT)).extracting(m -> m.id() + "=" + m.json().path("data").asText())
                .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(101, 300)
                        .mapToObj(i -> e + "-" + i + "=" + i).toList());
    }

    @Test
    void aResetIsANamedEventWhoseIdIsWhereTheStreamGoesOn() throws Exception {
        start(c -> c);
        String head = publish("t", "1");
        SseStream s = open("topic=t", "Last-Event-ID: zzz-5");
        s.next(WAIT);
        assertThat(s.next(WAIT).event()).isEqualTo("subscribed");
        SseStream.Message reset = s.next(WAIT);
        assertThat(reset.event()).isEqualTo("reset");
        assertThat(reset.id()).isEqualTo(head);
        assertThat(reset.json().path("reason").asText()).isEqualTo("unknown_epoch");
    }

    @Test
    void badQueriesAndLastEventIdsAre400JsonBeforeAnyStream() throws Exception {
        start(c -> c);
        for (String[] bad : new String[][] {{"topic=bad!", ""}, {"after=x-1", ""}, {"topic=a", "Last-Event-ID: nope"},
                {"topic=a&topic=b", "Last-Event-ID: " + "abc-1"}}) {
            String[] headers = bad[1].isEmpty() ? new String[0] : new String[] {bad[1]};
            SseStream s = open(bad[0], headers);
            assertThat(s.status).as(bad[0] + " " + bad[1]).isEqualTo(400);
            assertThat(s.header("content-type")).isEqualTo("application/json");
        }
        assertThat(Http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/sse?topic=a"))
                .POST(HttpRequest.BodyPublishers.noBody()).build()).status()).isEqualTo(405);
    }

    @Test
    void heartbeatCommentsKeepAnIdleStreamAliveEverySseInterval() throws Exception {
        start(c -> c.withHeartbeat(new ServerConfig.Heartbeat(Duration.ofSeconds(25), Duration.ofSeconds(10),
                Duration.ofMillis(200))));
        SseStream s = open("topic=t");
        long t0 = System.nanoTime();
        int pings = 0;
        while (pings < 3) {
            SseStream.Message m = s.messages.poll(5, TimeUnit.SECONDS);
            assertThat(m).isNotNull();
            if ("ping".equals(m.comment())) {
                pings++;
            }
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(3));
    }

    @Test
    void anythingTheClientSendsOnTheOneWayStreamEndsIt() throws Exception {
        start(c -> c);
        SseStream s = open("topic=t");
        s.next(WAIT);
        s.next(WAIT);
        s.output().write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(s.ended.get(5, TimeUnit.SECONDS)).isTrue();
        awaitNoConnections();
    }

    @Test
    void anHttp10StreamIsCloseDelimited() throws Exception {
        start(c -> c);
        SseStream s = SseStream.send(server.port(), "GET /v1/sse?topic=t HTTP/1.0\r\n\r\n");
        streams.add(s);
        assertThat(s.header("transfer-encoding")).isNull();
        assertThat(s.header("connection")).isEqualToIgnoringCase("close");
        s.next(WAIT);
        assertThat(s.next(WAIT).event()).isEqualTo("subscribed");
        String id = publish("t", "1");
        assertThat(s.events(1, WAIT)).extracting(SseStream.Message::id).containsExactly(id);
    }

    @Test
    void theJdkHttpClientReadsEventsLineByLineAsTheyArrive() throws Exception {
        start(c -> c);
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<Stream<String>> res = client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/v1/sse?topic=jdk")).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(res.statusCode()).isEqualTo(200);
        Iterator<String> lines = res.body().iterator();
        while (!lines.next().startsWith("event: subscribed")) {
            // the retry: line and its blank line
        }
        String id = publish("jdk", "{\"x\":true}");
        String previous = "";
        String line;
        while (!(line = lines.next()).startsWith("data: {\"type\":\"event\"")) {
            previous = line; // the rest of subscribed, then the event's id: line
        }
        assertThat(previous).isEqualTo("id: " + id);
        assertThat(line).startsWith("data: {\"type\":\"event\",\"topic\":\"jdk\",\"id\":\"" + id + "\"");
        assertThat(lines.next()).isEmpty(); // the blank line that ends the message
        res.body().close();
    }

    @Test
    void curlWithNoBufferingPrintsEachEventWithItsId() throws Exception {
        Path curl = Path.of("/usr/bin/curl");
        Assumptions.assumeTrue(Files.isExecutable(curl), "no /usr/bin/curl");
        start(c -> c);
        Process p = new ProcessBuilder(curl.toString(), "-sN", "--max-time", "5",
                "http://127.0.0.1:" + server.port() + "/v1/sse?topic=curl").redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).startsWith("retry: ");
            while (!out.readLine().startsWith("data: {\"type\":\"subscribed\"")) {
                // the subscribed event's other lines
            }
            String id = publish("curl", "{\"via\":\"curl\"}");
            assertThat(out.readLine()).isEmpty();
            assertThat(out.readLine()).isEqualTo("id: " + id);
            assertThat(out.readLine()).contains("\"data\":{\"via\":\"curl\"}");
        } finally {
            p.destroy();
        }
    }

    void awaitNoConnections() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.liveConnections() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.liveConnections()).isZero();
    }
}
