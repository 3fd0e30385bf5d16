package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.pushd.protocol.CloseCode;
import io.pushd.server.PushServer;
import io.pushd.server.config.AuthSettings;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Access control through a real server (auth.mode jwt), with the JDK's HTTP and WebSocket
 * clients and raw sockets: 401 for every kind of bad token, 403 outside the claims, in-band
 * subscribe and refresh, the 4001 expiry and an exact resume, the per-subject limit, and no token
 * in any log line, metric or error body of the run.
 */
class AccessControlEndToEndTest {

    @TempDir
    Path dir;

    private PushServer server;
    private final List<String> tokensUsed = new ArrayList<>();
    private final OctetSequenceKey hmac = TestKeys.hmac("hs-1");
    private final RSAKey rsa = TestKeys.rsa("rsa-1");

    private PushServer start(UnaryOperator<AuthConfig.Jwt> jwt, UnaryOperator<ServerConfig> tweak) throws Exception {
        Path jwks = dir.resolve("jwks.json");
        Files.writeString(jwks, TestKeys.jwks(hmac, rsa));
        ServerConfig c = TestServers.config(dir.resolve("data"));
        c = c.withAuth(new AuthSettings(AuthConfig.Mode.JWT, jwt.apply(AuthConfig.Jwt.defaults().withJwksFile(jwks.toString()))));
        server = TestServers.start(tweak.apply(c));
        return server;
    }

    private PushServer start() throws Exception {
        return start(j -> j, c -> c);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private String token(JWTClaimsSet claims) {
        String t = TestKeys.sign(hmac, JWSAlgorithm.HS256, claims);
        tokensUsed.add(t);
        return t;
    }

    private String token(String sub, Instant exp, List<String> topics, List<String> publish) {
        return token(new JWTClaimsSet.Builder().subject(sub).expirationTime(Date.from(exp))
                .claim("topics", topics).claim("publish", publish).build());
    }

    private String goodToken() {
        return token("user-1", Instant.now().plusSeconds(600), List.of("orders.*", "news"), List.of("orders.eu"));
    }

    private Http.Response publish(String topic, String authorization) {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/v1/topics/" + topic + "/events"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}"));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return Http.send(b.build());
    }

    private RawHttp.Response upgrade(String query) throws Exception {
        return RawHttp.exchange(server.port(), RawHttp.upgrade(query, ""));
    }

    private static String q(String token) {
        return URLEncoder.encode(token, StandardCharsets.UTF_8);
    }

    private WsClient live(String query) {
        return WsClient.connect(server.port(), query);
    }

    @Test
    void everyKindOfBadTokenIsRefusedWith401BeforeTheUpgradeAndOnPublish() throws Exception {
        try (LogCapture logs = new LogCapture(); DebugLogs debug = new DebugLogs()) {
            start();
            Instant now = Instant.now();
            String good = goodToken();
            String forged = good.substring(0, good.lastIndexOf('.') + 1) + "AAAA" + good.substring(good.lastIndexOf('.') + 5);
            String none = new PlainJWT(TestKeys.claims(now).build()).serialize();
            // HMAC/RSA confusion: HS256 "signed" with the RSA public key's bytes as the secret
            byte[] rsaPublic = rsa.toRSAPublicKey().getEncoded();
            SignedJWT confused = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("rsa-1").build(),
                    TestKeys.claims(now).build());
            confused.sign(new MACSigner(java.util.Arrays.copyOf(rsaPublic, Math.max(64, rsaPublic.length))));
            String expired = token(TestKeys.claims(now).expirationTime(Date.from(now.minusSeconds(120))).build());
            String notYet = token(TestKeys.claims(now).notBeforeTime(Date.from(now.plusSeconds(600))).build());
            String noExp = token(TestKeys.claims(now).expirationTime(null).build());
            String unknownKid = TestKeys.sign(hmac, JWSAlgorithm.HS256, TestKeys.claims(now).build(), "nobody");
            tokensUsed.addAll(List.of(forged, none, confused.serialize(), unknownKid));

            Map<String, String> expected = new java.util.LinkedHashMap<>();
            expected.put(forged, "bad signature");
            expected.put(none, "algorithm not allowed");
            expected.put(confused.serialize(), "algorithm not allowed");
            expected.put(expired, "token expired");
            expected.put(notYet, "token not yet valid");
            expected.put(noExp, "token without expiry");
            expected.put(unknownKid, "unknown key");
            for (Map.Entry<String, String> e : expected.entrySet()) {
                RawHttp.Response r = upgrade("topic=news&access_token=" + q(e.getKey()));
                assertThat(r.status()).as(e.getValue()).isEqualTo(401);
                assertThat(r.json().path("error").asText()).isEqualTo("invalid_token");
                assertThat(r.json().path("message").asText()).isEqualTo(e.getValue());
                assertThat(r.header("WWW-Authenticate")).isEqualTo("Bearer error=\"invalid_token\"");
                Http.Response p = publish("orders.eu", "Bearer " + e.getKey());
                assertThat(p.status()).as(e.getValue()).isEqualTo(401);
                assertThat(p.body()).doesNotContain(e.getKey());
            }
            RawHttp.Response missing = upgrade("topic=news");
            assertThat(missing.status()).isEqualTo(401);
            assertThat(missing.json().path("error").asText()).isEqualTo("missing_token");
            assertThat(missing.header("WWW-Authenticate")).isEqualTo("Bearer");
            assertThat(publish("orders.eu", null).json().path("error").asText()).isEqualTo("missing_token");

            String metrics = Http.get(server.port(), "/metrics").body();
            assertThat(metrics).contains("push_auth_denied_total{reason=\"bad_signature\"} 2.0")
                    .contains("push_auth_denied_total{reason=\"expired\"} 2.0")
                    .contains("push_auth_denied_total{reason=\"missing\"} 2.0");
            assertNoTokenIn(metrics);
            server.close();
            assertNoTokenIn(String.join("\n", logs.lines()));
            assertThat(logs.lines()).isNotEmpty();
        }
    }

    @Test
    void wrongIssuerAndAudienceAreRefusedWhenConfigured() throws Exception {
        start(j -> j.withIssuer("https://idp.example", "push"), c -> c);
        Instant now = Instant.now();
        String wrongIss = token(TestKeys.claims(now).issuer("https://evil.example").audience("push").build());
        String wrongAud = token(TestKeys.claims(now).issuer("https://idp.example").audience("other").build());
        String right = token(TestKeys.claims(now).issuer("https://idp.example").audience("push").build());
        assertThat(upgrade("topic=news&access_token=" + q(wrongIss)).json().path("message").asText())
                .isEqualTo("wrong issuer");
        assertThat(upgrade("topic=news&access_token=" + q(wrongAud)).json().path("message").asText())
                .isEqualTo("wrong audience");
        try (WsClient ws = live("topic=news&access_token=" + q(right))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
        }
    }

    @Test
    void aPublishInsideTheClaimIsStoredAndOneOutsideIs403() throws Exception {
        start();
        String t = goodToken();
        assertThat(publish("orders.eu", "Bearer " + t).status()).isEqualTo(201);
        Http.Response outside = publish("orders.us", "Bearer " + t);
        assertThat(outside.status()).isEqualTo(403);
        assertThat(outside.json().path("error").asText()).isEqualTo("publish_not_allowed");
        assertThat(Http.get(server.port(), "/metrics").body())
                .contains("push_auth_denied_total{reason=\"publish_not_allowed\"} 1.0");
    }

    private Http.Response get(String pathAndQuery, String authorization) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + pathAndQuery))
                .timeout(Duration.ofSeconds(10)).GET();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return Http.send(b.build());
    }

    @Test
    void theHistoryAndTheTopicInfoOverHttpNeedATokenWhoseTopicsCoverTheTopic() throws Exception {
        start();
        String t = goodToken(); // topics orders.*, news
        assertThat(publish("orders.eu", "Bearer " + t).status()).isEqualTo(201);
        for (String path : List.of("/v1/topics/orders.eu/events", "/v1/topics/orders.eu")) {
            Http.Response none = get(path, null);
            assertThat(none.status()).as(path).isEqualTo(401);
            assertThat(none.json().path("error").asText()).isEqualTo("missing_token");
            assertThat(none.body()).doesNotContain("\"n\":1");
            Http.Response bad = get(path, "Bearer " + t.substring(0, t.length() - 4) + "AAAA");
            assertThat(bad.status()).as(path).isEqualTo(401);
            String newsOnly = token("user-9", Instant.now().plusSeconds(600), List.of("news"), List.of("orders.eu"));
            Http.Response outside = get(path, "Bearer " + newsOnly);
            assertThat(outside.status()).as(path).isEqualTo(403);
            assertThat(outside.json().path("error").asText()).isEqualTo("topic_not_allowed");
            assertThat(get(path, "Bearer " + t).status()).as(path).isEqualTo(200);
        }
        Http.Response page = get("/v1/topics/orders.eu/events", "Bearer " + t);
        assertThat(page.json().path("events").get(0).path("data").path("n").asInt()).isEqualTo(1);
        // a browser's fetch may carry it as the query parameter, as for /v1/live and SSE
        assertThat(get("/v1/topics/orders.eu/events?access_token=" + q(t), null).status()).isEqualTo(200);
    }

    @Test
    void anSseStreamNeedsATokenAndATopicInsideTheClaim() throws Exception {
        start();
        String t = goodToken();
        HttpClient http = HttpClient.newHttpClient();
        java.util.function.Function<String, HttpRequest> sse = query -> HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/v1/sse?" + query)).timeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> none = http.send(sse.apply("topic=news"), HttpResponse.BodyHandlers.ofString());
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.body()).contains("missing_token");
        HttpResponse<String> outside = http.send(sse.apply("topic=secret&access_token=" + q(t)),
                HttpResponse.BodyHandlers.ofString());
        assertThat(outside.statusCode()).isEqualTo(403);
        assertThat(outside.body()).contains("topic_not_allowed").doesNotContain(t);
        HttpResponse<java.util.stream.Stream<String>> ok = http.send(sse.apply("topic=news&access_token=" + q(t)),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(ok.statusCode()).isEqualTo(200);
        try (java.util.stream.Stream<String> lines = ok.body()) {
            assertThat(lines.filter(l -> l.startsWith("event: ")).findFirst()).contains("event: subscribed");
        }
        assertThat(Http.get(server.port(), "/metrics").body())
                .contains("push_handshakes_total{outcome=\"refused_unauthorized\",transport=\"sse\"} 2.0");
    }

    @Test
    void aQueryTopicOutsideTheClaimIs403AndAnInBandOneAnErrorFrameOnAConnectionThatStays() throws Exception {
        start();
        String t = goodToken();
        RawHttp.Response refused = upgrade("topic=news&topic=secret&access_token=" + q(t));
        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.json().path("error").asText()).isEqualTo("topic_not_allowed");

        // the header carrier, as a server-side client would send it
        try (WsClient ws = WsClient.connect(HttpClient.newHttpClient(),
                URI.create("ws://127.0.0.1:" + server.port() + "/v1/live?topic=news"), Map.of("Authorization", "Bearer " + t))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            ws.send("{\"type\":\"subscribe\",\"topic\":\"secret\"}");
            JsonNode err = ws.next();
            assertThat(err.path("type").asText()).isEqualTo("error");
            assertThat(err.path("code").asText()).isEqualTo("topic_not_allowed");
            assertThat(err.path("topic").asText()).isEqualTo("secret");
            ws.send("{\"type\":\"subscribe\",\"topic\":\"orders.eu\"}");
            assertThat(ws.next().path("topic").asText()).isEqualTo("orders.eu"); // still open and listening
            assertThat(publish("orders.eu", "Bearer " + t).status()).isEqualTo(201);
            assertThat(ws.awaitEvents(1, Duration.ofSeconds(5))).isNotEmpty();
        }
    }

    @Test
    void aRefreshExtendsTheSessionAndAnotherSubjectOrABadTokenChangesNothing() throws Exception {
        start(j -> j.withLeeway(Duration.ZERO), c -> c);
        String shortLived = token("user-1", Instant.now().plusSeconds(2), List.of("news"), List.of("news"));
        try (WsClient ws = live("topic=news&access_token=" + q(shortLived))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            ws.send("{\"type\":\"auth\",\"token\":\"" + token("user-2", Instant.now().plusSeconds(60), List.of("news"),
                    List.of()) + "\"}");
            JsonNode other = ws.next();
            assertThat(other.path("code").asText()).isEqualTo("invalid_token");
            ws.send("{\"type\":\"auth\",\"token\":\"garbage\"}");
            assertThat(ws.next().path("code").asText()).isEqualTo("invalid_token");

            Instant later = Instant.now().plusSeconds(60);
            ws.send("{\"type\":\"auth\",\"token\":\"" + token("user-1", later, List.of("news"), List.of()) + "\"}");
            JsonNode ok = ws.next();
            assertThat(ok.path("type").asText()).isEqualTo("authenticated");
            assertThat(ok.path("expiresAt").asLong()).isEqualTo(later.getEpochSecond() * 1000);
            Thread.sleep(3_000); // past the first token's exp
            assertThat(ws.closeCode).isNotDone();
            assertThat(publish("news", "Bearer " + goodTokenFor("news")).status()).isEqualTo(201);
            assertThat(ws.awaitEvents(1, Duration.ofSeconds(5))).isNotEmpty();
        }
    }

    @Test
    void aRefreshWithNarrowerTopicsEndsTheSubscriptionsItNoLongerCoversAndRefusesThemInBand() throws Exception {
        start();
        String pub = "Bearer " + token("publisher", Instant.now().plusSeconds(600), List.of(), List.of("orders.eu", "news"));
        String wide = token("user-1", Instant.now().plusSeconds(600), List.of("orders.*", "news"), List.of());
        try (WsClient ws = live("topic=orders.eu&topic=news&access_token=" + q(wide))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            ws.send("{\"type\":\"auth\",\"token\":\"" + token("user-1", Instant.now().plusSeconds(600),
                    List.of("news"), List.of()) + "\"}");
            assertThat(ws.next().path("type").asText()).isEqualTo("authenticated");
            JsonNode ended = ws.next();
            assertThat(ended.path("code").asText()).isEqualTo("topic_not_allowed");
            assertThat(ended.path("topic").asText()).isEqualTo("orders.eu");
            ws.send("{\"type\":\"subscribe\",\"topic\":\"orders.eu\"}");
            assertThat(ws.next().path("code").asText()).isEqualTo("topic_not_allowed");
            assertThat(publish("orders.eu", pub).status()).isEqualTo(201);
            assertThat(publish("news", pub).status()).isEqualTo(201);
            List<JsonNode> events = ws.awaitEvents(1, Duration.ofSeconds(5));
            assertThat(events.stream().filter(n -> n.path("type").asText().equals("event"))
                    .map(n -> n.path("topic").asText()).toList()).containsExactly("news");
            assertThat(ws.messages.poll(300, java.util.concurrent.TimeUnit.MILLISECONDS)).isNull();
        }
    }

    private String goodTokenFor(String topic) {
        return token("publisher", Instant.now().plusSeconds(600), List.of(), List.of(topic));
    }

    @Test
    void anExpiryClosesWith4001AndAReconnectWithANewTokenResumesExactly() throws Exception {
        start(j -> j.withLeeway(Duration.ZERO), c -> c);
        String pub = "Bearer " + goodTokenFor("news");
        String first = token("user-1", Instant.now().plusSeconds(2), List.of("news"), List.of());
        String lastId;
        try (WsClient ws = live("topic=news&access_token=" + q(first))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            for (int i = 0; i < 3; i++) {
                assertThat(publish("news", pub).status()).isEqualTo(201);
            }
            List<JsonNode> got = ws.awaitEvents(3, Duration.ofSeconds(5));
            lastId = got.get(got.size() - 1).path("id").asText();
            assertThat(ws.awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.TOKEN_EXPIRED.code());
            assertThat(ws.closeReason()).isEqualTo("token expired");
        }
        List<String> missed = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            missed.add(publish("news", pub).json().path("id").asText());
        }
        String second = token("user-1", Instant.now().plusSeconds(60), List.of("news"), List.of());
        try (WsClient ws = live("topic=news@" + lastId + "&access_token=" + q(second))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            List<JsonNode> replayed = ws.awaitEvents(2, Duration.ofSeconds(5));
            assertThat(replayed.stream().filter(n -> n.path("type").asText().equals("event"))
                    .map(n -> n.path("id").asText()).toList()).isEqualTo(missed);
            assertThat(ws.messages.poll(300, java.util.concurrent.TimeUnit.MILLISECONDS)).isNull();
        }
    }

    @Test
    void anSseStreamWhoseTokenExpiresEndsWith4001AndRetryZeroAndNoRestartHintIsCounted() throws Exception {
        start(j -> j.withLeeway(Duration.ZERO), c -> c);
        String t = token("user-1", Instant.now().plusSeconds(2), List.of("news"), List.of());
        HttpResponse<java.util.stream.Stream<String>> sse = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/v1/sse?topic=news&access_token=" + q(t)))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(sse.statusCode()).isEqualTo(200);
        List<String> seen = new ArrayList<>();
        try (java.util.stream.Stream<String> lines = sse.body()) {
            java.util.Iterator<String> it = lines.iterator();
            while (it.hasNext() && (seen.isEmpty() || !seen.get(seen.size() - 1).startsWith("data: {\"code\""))) {
                seen.add(it.next());
            }
        }
        List<String> end = seen.subList(Math.max(0, seen.size() - 3), seen.size());
        // "reconnect at once (no backoff)": no jittered wait for an EventSource to sit out
        assertThat(end).containsExactly("retry: 0", "event: close", "data: {\"code\":4001,\"retryMs\":0}");
        String metrics = Http.get(server.port(), "/metrics").body();
        assertThat(metrics).contains("push_closes_sent_total{code=\"4001\"} 1.0")
                .contains("push_retry_hint_milliseconds_count 0");
    }

    @Test
    void theSubjectLimitClosesTheConnectionOverItWith1013() throws Exception {
        start(j -> j, c -> c.withLimits(c.limits().toBuilder().maxConnectionsPerSubject(1).build()));
        String t = goodToken();
        try (WsClient first = live("topic=news&access_token=" + q(t));
             WsClient second = live("topic=news&access_token=" + q(t))) {
            assertThat(first.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(second.awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.TRY_AGAIN_LATER.code());
            String other = token("user-2", Instant.now().plusSeconds(60), List.of("news"), List.of());
            try (WsClient third = live("topic=news&access_token=" + q(other))) {
                assertThat(third.next().path("type").asText()).isEqualTo("subscribed");
            }
        }
    }

    @Test
    void aTokenSentWhereAMethodATopicOrAnIdGoesComesBackMaskedInEveryAnswer() throws Exception {
        start();
        String good = goodToken();
        // short enough to be a valid topic name (base64url and dots are topic characters)
        String small = token(new JWTClaimsSet.Builder().subject("u")
                .expirationTime(Date.from(Instant.now().plusSeconds(600))).claim("topics", List.of("x")).build());
        assertThat(small.length()).isLessThanOrEqualTo(200);
        List<String> answers = new ArrayList<>();
        for (String path : List.of("/v1/topics/news/events", "/v1/topics/news", "/v1/sse?topic=news",
                "/v1/live?topic=news")) {
            RawHttp.Response r = RawHttp.exchange(server.port(), small + " " + path + " HTTP/1.1\r\nHost: x\r\n"
                    + "Authorization: Bearer " + good + "\r\nContent-Length: 0\r\n\r\n");
            assertThat(r.status()).as(path).isEqualTo(405);
            assertThat(r.json().path("message").asText()).as(path).startsWith(Redaction.MASK + " not allowed");
            answers.add(r.body());
        }
        for (String query : List.of("topic=" + small + "&topic=" + small, "topic=news@" + small)) {
            RawHttp.Response ws = upgrade(query + "&access_token=" + q(good));
            RawHttp.Response sse = RawHttp.exchange(server.port(), "GET /v1/sse?" + query + "&access_token=" + q(good)
                    + " HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(ws.status()).as(query).isEqualTo(400);
            assertThat(sse.status()).as(query).isEqualTo(400);
            answers.add(ws.body());
            answers.add(sse.body());
        }
        assertThat(answers.get(4)).as("named twice: quoted, masked").contains("'" + Redaction.MASK + "' named twice");
        try (WsClient ws = live("topic=news&access_token=" + q(good))) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            ws.send("{\"type\":\"subscribe\",\"topic\":\"" + small + "\"}");
            JsonNode refused = ws.next();
            assertThat(refused.path("code").asText()).isEqualTo("topic_not_allowed");
            assertThat(refused.path("topic").asText()).isEqualTo(Redaction.MASK);
            ws.send("{\"type\":\"unsubscribe\",\"topic\":\"" + small + "\"}");
            JsonNode notSubscribed = ws.next();
            assertThat(notSubscribed.path("code").asText()).isEqualTo("bad_message");
            answers.add(refused.toString());
            answers.add(notSubscribed.toString());
        }
        assertNoTokenIn(String.join("\n", answers));
    }

    private void assertNoTokenIn(String text) {
        for (String t : tokensUsed) {
            assertThat(text).doesNotContain(t);
            String signature = t.substring(t.lastIndexOf('.') + 1);
            if (!signature.isEmpty()) { // alg none has none
                assertThat(text).doesNotContain(signature); // not even the signature
            }
        }
    }

    /** The whole server at DEBUG while open, so the log check sees every line the server could write. */
    static final class DebugLogs implements AutoCloseable {
        private final Logger pushd = (Logger) LoggerFactory.getLogger("io.pushd");
        private final Level before = pushd.getLevel();

        DebugLogs() {
            pushd.setLevel(Level.DEBUG);
        }

        @Override
        public void close() {
            pushd.setLevel(before);
        }
    }
}
