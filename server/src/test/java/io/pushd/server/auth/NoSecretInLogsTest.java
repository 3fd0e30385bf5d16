package io.pushd.server.auth;

import static io.pushd.server.auth.TestKeys.claims;
import static io.pushd.server.auth.TestKeys.sign;
import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs every path of the auth code that logs or throws (loads, reloads, broken files, failed
 * fetches, private keys in a set, good and refused tokens of every kind, carriers, redaction)
 * with all auth loggers at TRACE, then greps every captured line and message for the tokens and
 * the key material used. One hit fails the test.
 */
class NoSecretInLogsTest {

    @TempDir
    Path dir;

    @Test
    void noTokenAndNoSecretAppearsInAnyLogLineOrErrorMessageOfTheRun() throws Exception {
        OctetSequenceKey hmac = TestKeys.hmac("h");
        RSAKey rsa = TestKeys.rsa("r"); // the file will hold its private part too
        ECKey ec = TestKeys.ec("e");
        List<String> secrets = new ArrayList<>(List.of(hmac.getKeyValue().toString(),
                rsa.getPrivateExponent().toString(), rsa.getFirstPrimeFactor().toString(), ec.getD().toString(),
                new String(hmac.toByteArray(), StandardCharsets.ISO_8859_1)));
        List<String> messages = new ArrayList<>();

        Path file = dir.resolve("jwks.json");
        String withPrivate = "{\"keys\":[" + hmac.toJSONString() + "," + rsa.toJSONString() + "," + ec.toJSONString() + "]}";
        Files.writeString(file, withPrivate);
        AtomicReference<String> served = new AtomicReference<>("{\"keys\":[" + hmac.toJSONString());
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/jwks", ex -> {
            byte[] b = served.get().getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        http.start();
        AuthConfig.Jwt cfg = AuthConfig.Jwt.defaults().withJwksFile(file.toString())
                .withJwksUrl("http://127.0.0.1:" + http.getAddress().getPort() + "/jwks")
                .withIssuer("iss", "aud").withIntervals(Duration.ofMillis(100), Duration.ofSeconds(1));

        List<String> tokens = new ArrayList<>();
        try (LogCapture logs = new LogCapture()) {
            try (KeySource source = KeySource.start(cfg, Duration.ofMillis(50))) {
                TokenVerifier v = new TokenVerifier(cfg, source, Clock.systemUTC());
                Instant now = Instant.now();
                tokens.add(sign(hmac, JWSAlgorithm.HS256, claims(now).issuer("iss").audience("aud").build()));
                tokens.add(sign(rsa, JWSAlgorithm.RS256, claims(now).issuer("iss").audience("aud").build()));
                tokens.add(sign(ec, JWSAlgorithm.ES256, claims(now).issuer("iss").audience("x").build()));
                tokens.add(sign(hmac, JWSAlgorithm.HS256, claims(now).expirationTime(Date.from(now.minusSeconds(99))).build()));
                tokens.add(sign(TestKeys.hmac("unknown"), JWSAlgorithm.HS256, claims(now).build()));
                tokens.add(sign(TestKeys.hmac("h"), JWSAlgorithm.HS256, claims(now).build()));
                tokens.add(sign(hmac, JWSAlgorithm.HS256, claims(now).claim("topics", List.of("bad pattern")).build()));
                tokens.add(TestKeys.b64("{\"alg\":\"none\"}") + "." + TestKeys.b64(claims(now).build().toString()) + ".");
                for (String t : tokens) {
                    AuthResult r = v.verify(BearerToken.of(t));
                    messages.add(String.valueOf(r));
                    TokenCarrier.Extraction e = TokenCarrier.extract("Bearer " + t, "/v1/live?access_token=" + t);
                    messages.add(String.valueOf(e));
                    messages.add(String.valueOf(TokenCarrier.extract(null, "/v1/live?access_token=" + t)));
                    messages.add(Redaction.uri("/v1/live?topic=a&access_token=" + t));
                }
                // broken reloads, each holding secrets
                Files.writeString(file, withPrivate.substring(0, withPrivate.length() - 3));
                Thread.sleep(500);
                Files.writeString(file, withPrivate.replace("\"kty\":\"RSA\"", "\"kty\":\"RSA\",\"alg\":\"HS256\""));
                Thread.sleep(500);
                Thread.sleep(1_500); // the URL served a truncated document all along: failed fetches logged
                served.set("{\"keys\":[" + hmac.toJSONString() + "]}");
                Thread.sleep(1_500);
            }
            try {
                Files.writeString(file, withPrivate.substring(0, 200));
                KeySource.start(cfg).close();
            } catch (io.pushd.server.config.ConfigException e) { // a start refused: its message is checked too
                messages.add(e.getMessage());
            }
            for (String s : logs.lines()) {
                messages.add(s);
            }
            assertThat(logs.lines()).as("the run did log").isNotEmpty();
        } finally {
            http.stop(0);
        }
        List<String> needles = new ArrayList<>(secrets);
        for (String t : tokens) {
            needles.add(t);
            String[] parts = t.split("\\.", -1);
            if (parts.length == 3 && !parts[2].isEmpty()) {
                needles.add(parts[2]); // the signature alone
            }
        }
        for (String m : messages) {
            for (String n : needles) {
                assertThat(m).as("a log line or message").doesNotContain(n);
            }
        }
    }
}
