package io.pushd.server.auth;

import static io.pushd.server.auth.TestKeys.claims;
import static io.pushd.server.auth.TestKeys.sign;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.sun.net.httpserver.HttpServer;
import io.pushd.server.config.ConfigException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeySourceTest {

    static final Duration POLL = Duration.ofMillis(100);

    @TempDir
    Path dir;
    KeySource source;
    HttpServer http;

    @AfterEach
    void stop() {
        if (source != null) {
            source.close();
        }
        if (http != null) {
            http.stop(0);
        }
    }

    AuthConfig.Jwt fileConfig(Path file) {
        return AuthConfig.Jwt.defaults().withJwksFile(file.toString()).withIntervals(POLL, Duration.ofSeconds(1));
    }

    static void writeAtomically(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    static boolean grants(TokenVerifier v, String token) {
        return v.verify(BearerToken.of(token)) instanceof Grant;
    }

    @Test
    void aChangedJwksFileIsReloadedWithoutARestart() throws Exception {
        OctetSequenceKey first = TestKeys.hmac("k1");
        OctetSequenceKey second = TestKeys.hmac("k2");
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, TestKeys.jwks(first));
        source = KeySource.start(fileConfig(file));
        TokenVerifier v = new TokenVerifier(AuthConfig.Jwt.defaults(), source, Clock.systemUTC());
        String t1 = sign(first, JWSAlgorithm.HS256, claims(Instant.now()).build());
        String t2 = sign(second, JWSAlgorithm.HS256, claims(Instant.now()).build());
        assertThat(grants(v, t1)).isTrue();
        assertThat(grants(v, t2)).isFalse();

        writeAtomically(file, TestKeys.jwks(first, second)); // rotation: both for a while
        await("k2 loaded", () -> grants(v, t2));
        assertThat(grants(v, t1)).isTrue();

        Files.writeString(file, TestKeys.jwks(second)); // in place, not atomic: read once it stops changing
        await("k1 dropped", () -> !grants(v, t1));
        assertThat(grants(v, t2)).isTrue();
    }

    @Test
    void aBrokenNewFileKeepsTheOldKeysAndLogsOneWarningWithoutKeyMaterial() throws Exception {
        OctetSequenceKey good = TestKeys.hmac("good");
        OctetSequenceKey next = TestKeys.hmac("next");
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, TestKeys.jwks(good));
        try (LogCapture logs = new LogCapture()) {
            source = KeySource.start(fileConfig(file));
            TokenVerifier v = new TokenVerifier(AuthConfig.Jwt.defaults(), source, Clock.systemUTC());
            String token = sign(good, JWSAlgorithm.HS256, claims(Instant.now()).build());
            // a truncated write: the new secret's text is in the file, half of it
            String broken = TestKeys.jwks(good, next);
            broken = broken.substring(0, broken.length() - 10);
            writeAtomically(file, broken);
            await("a warning", () -> !logs.messages(Level.WARN).isEmpty());
            Thread.sleep(POLL.toMillis() * 5); // more polls of the same broken file: no more warnings
            assertThat(logs.messages(Level.WARN)).singleElement().asString()
                    .contains("not a JSON object").contains("keeping the 1 key(s) loaded before: good oct")
                    .doesNotContain(good.getKeyValue().toString()).doesNotContain(next.getKeyValue().toString());
            assertThat(grants(v, token)).isTrue();
            assertThat(source.current().describe()).isEqualTo("good oct");

            // a wrong but valid-JSON set (secret too short) is refused the same way
            writeAtomically(file, "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"short\",\"k\":\"c2hvcnQ\"}]}");
            await("a second warning", () -> logs.messages(Level.WARN).size() == 2);
            assertThat(grants(v, token)).isTrue();

            // the file repaired: loaded
            writeAtomically(file, TestKeys.jwks(next));
            await("next loaded", () -> source.current().describe().equals("next oct"));
            assertThat(grants(v, token)).isFalse();
        }
    }

    @Test
    void aMissingOrBrokenFileAtStartIsAConfigurationErrorThatNamesNoSecret() throws Exception {
        assertThatThrownBy(() -> KeySource.start(fileConfig(dir.resolve("absent.json"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("absent.json: cannot be read");
        Path file = dir.resolve("bad.json");
        OctetSequenceKey k = TestKeys.hmac("k");
        String whole = TestKeys.jwks(k);
        Files.writeString(file, whole.substring(0, whole.length() - 4)); // truncated, the secret still in it
        assertThatThrownBy(() -> KeySource.start(fileConfig(file))).isInstanceOf(ConfigException.class)
                .hasMessageNotContaining(k.getKeyValue().toString());
    }

    @Test
    void aJwksUrlIsFetchedOffTheCallerAndTheLastGoodSetSurvivesAFailure() throws Exception {
        RSAKey one = TestKeys.rsa("one");
        RSAKey two = TestKeys.rsa("two");
        AtomicReference<String> body = new AtomicReference<>(TestKeys.jwks(one));
        AtomicInteger status = new AtomicInteger(200);
        AtomicInteger fetches = new AtomicInteger();
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/jwks", ex -> {
            fetches.incrementAndGet();
            byte[] b = body.get().getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(status.get(), b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        http.start();
        String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/jwks?tenant=x";
        AuthConfig.Jwt cfg = AuthConfig.Jwt.defaults().withJwksUrl(url).withIntervals(POLL, Duration.ofSeconds(1));
        try (LogCapture logs = new LogCapture()) {
            source = KeySource.start(cfg, Duration.ofMillis(200));
            TokenVerifier v = new TokenVerifier(cfg, source, Clock.systemUTC());
            String t1 = sign(one, JWSAlgorithm.RS256, claims(Instant.now()).build());
            String t2 = sign(two, JWSAlgorithm.RS256, claims(Instant.now()).build());
            assertThat(grants(v, t1)).as("fetched at start").isTrue();

            status.set(500);
            int before = fetches.get();
            await("a failed refresh", () -> fetches.get() > before + 1);
            assertThat(grants(v, t1)).as("last good set kept").isTrue();
            assertThat(logs.messages(Level.WARN)).as("one warning for a run of failures").hasSize(1);
            assertThat(logs.messages(Level.WARN).get(0)).contains("HTTP 500").doesNotContain("tenant=x");

            status.set(200);
            body.set(TestKeys.jwks(one, two));
            // an unknown kid asks for an early fetch instead of waiting out the refresh interval
            await("two fetched", () -> grants(v, t2));
            assertThat(grants(v, t1)).isTrue();
        }
    }

    @Test
    void aJwksUrlThatStallsInTheMiddleOfItsBodyNeitherHoldsUpTheStartNorStopsLaterFetches() throws Exception {
        RSAKey one = TestKeys.rsa("one");
        AtomicInteger fetches = new AtomicInteger();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        java.util.concurrent.ExecutorService handlers = java.util.concurrent.Executors.newCachedThreadPool();
        http.setExecutor(handlers);
        http.createContext("/jwks", ex -> {
            byte[] b = TestKeys.jwks(one).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            if (fetches.incrementAndGet() == 1) {
                // the headers and a first byte, then nothing: a proxy or an identity provider that hangs
                ex.getResponseBody().write(b, 0, 1);
                ex.getResponseBody().flush();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            } else {
                ex.getResponseBody().write(b);
            }
            ex.close();
        });
        http.start();
        AuthConfig.Jwt cfg = AuthConfig.Jwt.defaults()
                .withJwksUrl("http://127.0.0.1:" + http.getAddress().getPort() + "/jwks")
                .withIntervals(POLL, Duration.ofSeconds(1));
        try {
            long started = System.nanoTime();
            Duration timeout = Duration.ofSeconds(2); // the server's is 10 s: the same code, a shorter wait
            source = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                    timeout.multipliedBy(4), () -> KeySource.start(cfg, KeySource.MIN_EARLY_FETCH_GAP, timeout));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(timeout.plusSeconds(5));
            TokenVerifier v = new TokenVerifier(cfg, source, Clock.systemUTC());
            String t1 = sign(one, JWSAlgorithm.RS256, claims(Instant.now()).build());
            await("the keys of a fetch after the stalled one", () -> grants(v, t1));
        } finally {
            release.countDown();
            handlers.shutdownNow();
        }
    }

    @Test
    void anEarlyFetchForUnknownKidsIsRateLimited() throws Exception {
        AtomicInteger fetches = new AtomicInteger();
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/jwks", ex -> {
            fetches.incrementAndGet();
            byte[] b = TestKeys.jwks(TestKeys.hmac("only")).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        http.start();
        AuthConfig.Jwt cfg = AuthConfig.Jwt.defaults()
                .withJwksUrl("http://127.0.0.1:" + http.getAddress().getPort() + "/jwks")
                .withIntervals(POLL, Duration.ofMinutes(5));
        source = KeySource.start(cfg, Duration.ofSeconds(30));
        TokenVerifier v = new TokenVerifier(cfg, source, Clock.systemUTC());
        String stranger = sign(TestKeys.hmac("nope"), JWSAlgorithm.HS256, claims(Instant.now()).build());
        for (int i = 0; i < 1_000; i++) {
            assertThat(v.verify(BearerToken.of(stranger))).isEqualTo(new Denial(DenialReason.UNKNOWN_KEY));
        }
        Thread.sleep(300);
        assertThat(fetches).as("the start-up fetch only: a kid flood is no fetch flood").hasValue(1);
    }
}
