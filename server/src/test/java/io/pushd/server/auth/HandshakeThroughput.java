package io.pushd.server.auth;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jwt.JWTClaimsSet;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * WebSocket upgrades per second against a running server (the fat jar), each one from the JDK
 * client's upgrade to the first {@code subscribed} frame, {@code concurrency} at a time; a rough
 * loop, not a benchmark harness. Two commands:
 * <pre>
 *   java -cp <test classpath> io.pushd.server.auth.HandshakeThroughput keys DIR
 *       writes DIR/jwks.json (an oct and an RSA key) and DIR/hs256.token, DIR/rs256.token
 *   java -cp <test classpath> io.pushd.server.auth.HandshakeThroughput run PORT N CONCURRENCY [TOKEN_FILE]
 * </pre>
 */
public final class HandshakeThroughput {

    private HandshakeThroughput() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("keys")) {
            Path dir = Path.of(args[1]);
            JWK hmac = TestKeys.hmac("hs");
            JWK rsa = TestKeys.rsa("rs");
            Files.writeString(dir.resolve("jwks.json"), TestKeys.jwks(hmac, rsa));
            JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("bench")
                    .expirationTime(Date.from(Instant.now().plusSeconds(3600))).claim("topics", List.of("*")).build();
            Files.writeString(dir.resolve("hs256.token"), TestKeys.sign(hmac, JWSAlgorithm.HS256, claims));
            Files.writeString(dir.resolve("rs256.token"), TestKeys.sign(rsa, JWSAlgorithm.RS256, claims));
            return;
        }
        int port = Integer.parseInt(args[1]);
        int n = Integer.parseInt(args[2]);
        int concurrency = Integer.parseInt(args[3]);
        String token = args.length > 4 ? Files.readString(Path.of(args[4])).trim() : null;
        URI uri = URI.create("ws://127.0.0.1:" + port + "/v1/live?topic=bench"
                + (token == null ? "" : "&access_token=" + URLEncoder.encode(token, StandardCharsets.UTF_8)));
        HttpClient http = HttpClient.newHttpClient();
        run(http, uri, Math.min(n, 500), concurrency); // warm-up
        long t0 = System.nanoTime();
        int failed = run(http, uri, n, concurrency);
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("%s: %d upgrades in %.2f s = %.0f/s (%d failed), concurrency %d%n",
                token == null ? "no token" : Path.of(args[4]).getFileName(), n, s, n / s, failed, concurrency);
    }

    private static int run(HttpClient http, URI uri, int n, int concurrency) throws InterruptedException {
        Semaphore slots = new Semaphore(concurrency);
        AtomicInteger failed = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            slots.acquire();
            CompletableFuture<Void> subscribed = new CompletableFuture<>();
            http.newWebSocketBuilder().buildAsync(uri, new WebSocket.Listener() {
                @Override
                public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                    subscribed.complete(null);
                    ws.abort();
                    return null;
                }
            }).whenComplete((ws, e) -> {
                if (e != null) {
                    subscribed.completeExceptionally(e);
                }
            });
            subscribed.orTimeout(10, TimeUnit.SECONDS).whenComplete((v, e) -> {
                if (e != null) {
                    failed.incrementAndGet();
                }
                slots.release();
            });
        }
        slots.acquire(concurrency);
        return failed.get();
    }
}
