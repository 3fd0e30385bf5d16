package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every malformed request, query and frame gets a clear answer, and nothing is stored. */
class BadInputTest {

    @TempDir
    Path dataDir;
    PushServer server;
    int port;
    long expectedHeadOfT = 1;

    @BeforeEach
    void start() throws Exception {
        server = TestServers.start(dataDir);
        port = server.port();
        assertThat(Http.publish(port, "t", "{\"n\":1}").status()).isEqualTo(201);
    }

    @AfterEach
    void stop() {
        // whatever was sent, the one good event is all that is stored
        assertThat(server.store().range("t").head()).isEqualTo(expectedHeadOfT);
        server.close();
    }

    private void assertError(Http.Response r, int status, String code) {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(r.header("content-type")).isEqualTo("application/json");
        assertThat(r.json().path("error").asText()).isEqualTo(code);
        assertThat(r.json().path("message").asText()).isNotBlank();
    }

    private static HttpRequest.Builder post(int port, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10));
    }

    @Test
    void publishToAnInvalidTopicNameIs400() {
        assertError(Http.publish(port, "bad!topic", "{}"), 400, "invalid_topic");
        assertError(Http.publish(port, "x".repeat(201), "{}"), 400, "invalid_topic");
        assertThat(server.store().range("bad!topic").head()).isZero();
    }

    @Test
    void publishOfInvalidJsonIs400() {
        assertError(Http.publish(port, "t", "{bad"), 400, "bad_json");
        assertError(Http.publish(port, "t", "{} {}"), 400, "bad_json");
        assertError(Http.publish(port, "t", ""), 400, "bad_json");
        assertError(Http.publish(port, "t", "   "), 400, "bad_json");
        // well-formed, but an exponent past 32 bits: a 400, not a 500 with a stack trace logged
        assertError(Http.publish(port, "json-refused", "{\"price\":1e9999999999}"), 400, "bad_json");
        assertError(Http.publish(port, "json-refused", "{\"a\":1,\"a\":2}"), 400, "bad_json");
        assertThat(server.store().range("json-refused").head()).isZero();
    }

    @Test
    void publishWithoutJsonContentTypeIs415() {
        assertError(Http.send(post(port, "/v1/topics/t/events").header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build()), 415, "unsupported_media_type");
        assertError(Http.send(post(port, "/v1/topics/t/events")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build()), 415, "unsupported_media_type");
    }

    @Test
    void publishWithAnEmptyContentTypeIs415() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: \r\nContent-Length: 2\r\n\r\n{}");
        assertThat(r.status()).isEqualTo(415);
        assertThat(r.json().path("error").asText()).isEqualTo("unsupported_media_type");
    }

    @Test
    void oversizedPublishAnnouncedWithExpectContinueGetsAJson413() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n");
        assertThat(r.status()).isEqualTo(413);
        assertThat(r.json().path("error").asText()).isEqualTo("payload_too_large");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        String publish = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}";
        String info = "GET /v1/topics/t HTTP/1.1\r\nHost: x\r\n\r\n";
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write((publish + info + publish).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.io.InputStream in = s.getInputStream();
            List<String> bodies = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                StringBuilder head = new StringBuilder();
                while (!head.toString().endsWith("\r\n\r\n")) {
                    head.append((char) in.read());
                }
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)")
                        .matcher(head);
                assertThat(m.find()).isTrue();
                bodies.add(head.substring(9, 12) + " " + new String(in.readNBytes(Integer.parseInt(m.group(1))),
                        java.nio.charset.StandardCharsets.UTF_8));
            }
            String e = server.epoch();
            assertThat(bodies).containsExactly(
                    "201 {\"topic\":\"t\",\"id\":\"" + e + "-2\"}",
                    "200 {\"topic\":\"t\",\"epoch\":\"" + e + "\",\"head\":\"" + e + "-2\",\"oldest\":\"" + e + "-1\"}",
                    "201 {\"topic\":\"t\",\"id\":\"" + e + "-3\"}");
        }
        expectedHeadOfT = 3;
    }

    /** The next {@code n} answers on {@code in}, each as "STATUS BODY"; fewer when the server closes first. */
    private static List<String> answers(java.io.InputStream in, int n) throws java.io.IOException {
        List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringBuilder head = new StringBuilder();
            int c;
            while (!head.toString().endsWith("\r\n\r\n") && (c = in.read()) >= 0) {
                head.append((char) c);
            }
            if (!head.toString().endsWith("\r\n\r\n")) {
                return out;
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
            int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
            out.add(head.substring(9, 12) + " " + new String(in.readNBytes(length), java.nio.charset.StandardCharsets.UTF_8));
        }
        return out;
    }

    private static final String SMUGGLED = "POST /v1/topics/smuggled/events HTTP/1.1\r\nHost: x\r\n"
            + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

    @Test
    void aBodySentWithAnUnsupportedExpectationIsReadAsTheBodyNeverAsTheNextRequest() throws Exception {
        // Had the codec been told to skip the body of a refused expectation, the body, a request
        // of its own, would run next: smuggled past whatever checked the outer request.
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("POST /v1/topics/outer/events HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Type: application/json\r\nExpect: foo\r\nContent-Length: " + SMUGGLED.length()
                    + "\r\n\r\n" + SMUGGLED + "GET /v1/topics/smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            List<String> answers = answers(s.getInputStream(), 2);
            assertThat(answers).hasSize(2);
            assertThat(answers.get(0)).startsWith("417 ").contains("\"error\":\"expectation_failed\"");
            assertThat(answers.get(1)).startsWith("200 ").contains("\"head\":null"); // the same connection goes on
        }
        assertThat(server.store().range("smuggled").head()).isZero();
        assertThat(server.store().range("outer").head()).isZero();
    }

    @Test
    void aBodySentAnywayAfterAnOversizedExpectContinueIsNeverRunAsARequest() throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("POST /v1/topics/outer/events HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 70000\r\n\r\n"
                    + SMUGGLED).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            List<String> answers = answers(s.getInputStream(), 2);
            assertThat(answers).hasSize(1); // then the server closes
            assertThat(answers.get(0)).startsWith("413 ").contains("payload_too_large");
        }
        assertThat(server.store().range("smuggled").head()).isZero();
    }

    @Test
    void anOversizedBodyPipelinedBehindAPublishIsRefusedOnlyAfterThePublishIsAnswered() throws Exception {
        String publish = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}";
        for (String oversized : new String[] {
                "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Expect: 100-continue\r\nContent-Length: 70000\r\n\r\n",
                "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 70000\r\n\r\n" + "x".repeat(70000)}) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write((publish + oversized).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                List<String> answers = answers(s.getInputStream(), 3);
                expectedHeadOfT++;
                assertThat(answers).hasSize(2);
                assertThat(answers.get(0)).isEqualTo("201 {\"topic\":\"t\",\"id\":\"" + server.epoch() + "-"
                        + expectedHeadOfT + "\"}"); // stored, and the client is told so
                assertThat(answers.get(1)).startsWith("413 ").contains("payload_too_large");
            }
        }
    }

    @Test
    void morePipelinedPublishesThanNettysDefaultPipelineDepthAreAllAnswered() throws Exception {
        String publish = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}";
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(publish.repeat(200).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            List<String> answers = answers(s.getInputStream(), 200);
            assertThat(answers).hasSize(200).allSatisfy(a -> assertThat(a).startsWith("201 "));
            assertThat(answers.get(199)).contains("-201\"");
        }
        expectedHeadOfT = 201;
    }

    @Test
    void publishesFromAClientThatEndsItsSideAfterThemAreAllAnsweredThenTheServerCloses() throws Exception {
        String publish = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}";
        for (int n : new int[] {1, 3}) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(publish.repeat(n).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                s.shutdownOutput(); // as `printf ... | nc -N` does: the answers are still read
                List<String> answers = answers(s.getInputStream(), n + 1);
                assertThat(answers).hasSize(n).allSatisfy(a -> assertThat(a).startsWith("201 "));
                assertThat(s.getInputStream().read()).as("then the server closes").isEqualTo(-1);
                expectedHeadOfT += n;
            }
        }
    }

    @Test
    void aWebSocketWhosePeerEndsItsSideIsClosed() throws Exception {
        try (io.pushd.server.testing.RawWebSocket ws = io.pushd.server.testing.RawWebSocket.open(port, "topic=t", 65536)) {
            ws.socket.setSoTimeout(10_000);
            ws.socket.shutdownOutput();
            java.io.InputStream in = ws.socket.getInputStream();
            long deadline = System.nanoTime() + 10_000_000_000L;
            int b = 0;
            while (b >= 0 && System.nanoTime() < deadline) {
                b = in.read(); // the subscribed frame, then the end
            }
            assertThat(b).isEqualTo(-1);
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (server.liveConnections() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.liveConnections()).isZero();
    }

    @Test
    void publishLargerThanTheLimitIs413() {
        String big = "\"" + "x".repeat(70 * 1024) + "\"";
        assertError(Http.publish(port, "t", big), 413, "payload_too_large");
    }

    @Test
    void a413ReachesAClientWhoseOversizedBodyIsStillUnreadWhenTheServerCloses() throws Exception {
        // The body's bytes sit unread in the server's receive buffer when it answers; a plain close would
        // send RST, and the client's kernel would drop the 413 before the client read it.
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            byte[] body = new byte[200 * 1024];
            java.util.Arrays.fill(body, (byte) 'x');
            s.getOutputStream().write(("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            s.getOutputStream().write(body);
            s.getOutputStream().flush();
            Thread.sleep(300); // the server has answered and ended its side by now
            String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 413").contains("payload_too_large").containsIgnoringCase("connection: close");
        }
    }

    @Test
    void wrongMethodsAre405WithAllow() {
        Http.Response r = Http.send(post(port, "/v1/topics/t/events").PUT(HttpRequest.BodyPublishers.noBody())
                .build());
        assertError(r, 405, "method_not_allowed");
        assertThat(r.header("allow")).isEqualTo("GET, HEAD, POST");
        Http.Response health = Http.send(post(port, "/healthz").POST(HttpRequest.BodyPublishers.noBody()).build());
        assertError(health, 405, "method_not_allowed");
        Http.Response live = Http.send(post(port, "/v1/live?topic=t").POST(HttpRequest.BodyPublishers.noBody())
                .build());
        assertError(live, 405, "method_not_allowed");
    }

    @Test
    void unknownPathsAre404() {
        assertError(Http.get(port, "/nope"), 404, "not_found");
        assertError(Http.get(port, "/v1/topics/t/other"), 404, "not_found");
    }

    @Test
    void invalidIdempotencyKeyIs400() throws Exception {
        assertError(Http.publish(port, "t", "{}", "k".repeat(201)), 400, "invalid_idempotency_key");
        String raw = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: caf\u00e9\r\nContent-Length: 2\r\n\r\n{}";
        RawHttp.Response r = RawHttp.exchange(port, raw);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().path("error").asText()).isEqualTo("invalid_idempotency_key");
    }

    @Test
    void twoIdempotencyKeysOrTwoAuthorizationHeadersAre400AndNothingIsStored() throws Exception {
        RawHttp.Response keys = RawHttp.exchange(port, "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/json\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n"
                + "Content-Length: 2\r\n\r\n{}");
        assertThat(keys.status()).isEqualTo(400);
        assertThat(keys.json().path("error").asText()).isEqualTo("invalid_idempotency_key");
        RawHttp.Response auth = RawHttp.exchange(port, "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/json\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n"
                + "Content-Length: 2\r\n\r\n{}");
        assertThat(auth.status()).isEqualTo(400);
        assertThat(auth.json().path("error").asText()).isEqualTo("bad_request");
        assertThat(auth.body()).doesNotContain("Bearer");
    }

    @Test
    void anAbsoluteFormRequestTargetIsServedLikeItsOriginForm() throws Exception {
        // RFC 9112 3.2.2: a server must accept it (proxies send it)
        RawHttp.Response r = RawHttp.exchange(port, "POST http://127.0.0.1:" + port + "/v1/topics/t/events HTTP/1.1\r\n"
                + "Host: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        expectedHeadOfT = 2;
        RawHttp.Response info = RawHttp.exchange(port, "GET HTTPS://example.com/v1/topics/t HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(info.status()).isEqualTo(200);
        assertThat(info.json().path("head").asText()).endsWith("-2");
    }

    @Test
    void aRequestLineOver64KiBOrHeadersOver80KiBAre414And431() throws Exception {
        RawHttp.Response uri = RawHttp.exchange(port, "GET /v1/topics/t?x=" + "t".repeat(70_000) + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(uri.status()).isEqualTo(414);
        assertThat(uri.json().path("error").asText()).isEqualTo("bad_request");
        RawHttp.Response headers = RawHttp.exchange(port, "GET /v1/topics/t HTTP/1.1\r\nHost: x\r\nX-Big: "
                + "b".repeat(90_000) + "\r\n\r\n");
        assertThat(headers.status()).isEqualTo(431);
        assertThat(headers.json().path("message").asText()).contains("headers larger than 81920 bytes");
    }

    @Test
    void malformedHttpIs400() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "GET /\u0001 HTTP/9.9 junk\r\n\r\n");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().path("error").asText()).isEqualTo("bad_request");
    }

    @Test
    void invalidSubscribeQueriesAreRefusedBeforeTheUpgrade() throws Exception {
        String tooMany = IntStream.range(0, 101).mapToObj(i -> "topic=t" + i).collect(Collectors.joining("&"));
        String[][] cases = {
            {"after=", "invalid_query"},
            {"topic=bad!name", "invalid_topic"},
            {"topic=t@nodash", "invalid_id"},
            {"topic=t@E-1", "invalid_id"},
            {"topic=a&topic=b&after=x-1", "invalid_query"},
            {"topic=t&topic=t", "invalid_query"},
            {"topic=t&color=red", "invalid_query"},
            {tooMany, "too_many_topics"},
        };
        for (String[] c : cases) {
            RawHttp.Response r = RawHttp.exchange(port, RawHttp.upgrade(c[0], ""));
            assertThat(r.status()).as(c[0]).isEqualTo(400);
            assertThat(r.json().path("error").asText()).as(c[0]).isEqualTo(c[1]);
        }
    }

    @Test
    void malformedUpgradeHeadersAre400() throws Exception {
        String noUpgrade = "GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
        String noConnection = "GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
        String noKey = "GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n";
        String badKey = "GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n";
        String http10 = RawHttp.upgrade("topic=t", "").replace(" HTTP/1.1\r\n", " HTTP/1.0\r\n"); // RFC 6455 4.1
        for (String req : new String[] {noUpgrade, noConnection, noKey, badKey, http10}) {
            RawHttp.Response r = RawHttp.exchange(port, req);
            assertThat(r.status()).as(req).isEqualTo(400);
            assertThat(r.json().path("error").asText()).isEqualTo("bad_request");
        }
    }

    @Test
    void unsupportedWebSocketVersionIs426NamingVersion13() throws Exception {
        String req = "GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n";
        RawHttp.Response r = RawHttp.exchange(port, req);
        assertThat(r.status()).isEqualTo(426);
        assertThat(r.header("sec-websocket-version")).isEqualTo("13");
    }

    @Test
    void binaryFrameClosesWith1003() throws Exception {
        try (WsClient c = WsClient.connect(port, "topic=t")) {
            c.next();
            c.socket().sendBinary(ByteBuffer.wrap(new byte[] {1, 2, 3}), true).join();
            assertThat(c.awaitClose(Duration.ofSeconds(10))).isEqualTo(CloseCode.UNSUPPORTED_DATA.code());
        }
    }

    @Test
    void messageOverTheFrameLimitClosesWith1009() throws Exception {
        try (WsClient c = WsClient.connect(port, "topic=t")) {
            c.next();
            c.socket().sendText("{\"type\":\"subscribe\",\"topic\":\"" + "x".repeat(70 * 1024) + "\"}", true);
            assertThat(c.awaitClose(Duration.ofSeconds(10))).isEqualTo(CloseCode.MESSAGE_TOO_BIG.code());
        }
    }

    @Test
    void badInBandMessagesGetErrorFramesAndTheConnectionStaysUsable() throws Exception {
        try (WsClient c = WsClient.connect(port, "topic=t")) {
            c.next();
            String[][] cases = {
                {"not json", "bad_json"},
                {"[1,2]", "bad_message"},
                {"{\"type\":\"dance\",\"topic\":\"t\"}", "bad_message"},
                {"{\"type\":\"subscribe\",\"topic\":\"no good\"}", "invalid_topic"},
                {"{\"type\":\"subscribe\",\"topic\":\"u\",\"after\":\"zz\"}", "invalid_id"},
                {"{\"type\":\"subscribe\",\"topic\":\"u\",\"after\":7}", "invalid_id"},
                {"{\"type\":\"subscribe\",\"topic\":\"t\"}", "bad_message"},
                {"{\"type\":\"unsubscribe\",\"topic\":\"never\"}", "bad_message"},
            };
            for (String[] cse : cases) {
                c.send(cse[0]);
                JsonNode err = c.next();
                assertThat(err.path("type").asText()).as(cse[0]).isEqualTo("error");
                assertThat(err.path("code").asText()).as(cse[0]).isEqualTo(cse[1]);
            }
            Http.publish(port, "u", "{}");
            c.send("{\"type\":\"subscribe\",\"topic\":\"u\"}");
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
        } finally {
            assertThat(server.store().range("u").head()).isEqualTo(1);
        }
    }

    @Test
    void subscribingPastTheTopicLimitGetsAnErrorFrame() throws Exception {
        try (WsClient c = WsClient.connect(port, "topic=t")) {
            c.next();
            for (int i = 1; i < 100; i++) {
                c.send("{\"type\":\"subscribe\",\"topic\":\"x" + i + "\"}");
                assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            }
            c.send("{\"type\":\"subscribe\",\"topic\":\"one-too-many\"}");
            JsonNode err = c.next();
            assertThat(err.path("code").asText()).isEqualTo("too_many_topics");
        }
    }

    @Test
    void unsubscribeStopsTheTopicsEvents() throws Exception {
        try (WsClient c = WsClient.connect(port, "topic=t&topic=v")) {
            c.next();
            c.next();
            c.send("{\"type\":\"unsubscribe\",\"topic\":\"t\"}");
            Thread.sleep(200);
            assertThat(Http.publish(port, "t", "{\"after\":\"unsubscribe\"}").status()).isEqualTo(201);
            expectedHeadOfT = 2;
            Http.publish(port, "v", "{\"only\":\"v\"}");
            JsonNode m = c.next();
            assertThat(m.path("topic").asText()).isEqualTo("v");
            assertThat(c.messages.poll(300, java.util.concurrent.TimeUnit.MILLISECONDS)).isNull();
        }
    }
}
