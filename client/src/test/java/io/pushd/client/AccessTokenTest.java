package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.gen.OctetSequenceKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.pushd.client.testing.Recorder;
import io.pushd.client.testing.TestServers;
import io.pushd.protocol.CloseCode;
import io.pushd.server.PushServer;
import io.pushd.server.auth.AuthConfig;
import io.pushd.server.config.AuthSettings;
import io.pushd.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client's access-token supplier and in-band refresh against a server with auth.mode jwt. */
class AccessTokenTest {

    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;
    PushServer server;
    ClientResources resources;
    final Recorder recorder = new Recorder();
    final OctetSequenceKey key;

    AccessTokenTest() throws Exception {
        key = new OctetSequenceKeyGenerator(256).keyID("k1").generate();
    }

    @BeforeEach
    void start() throws Exception {
        Path jwks = dir.resolve("jwks.json");
        Files.writeString(jwks, "{\"keys\":[" + key.toJSONString() + "]}");
        ServerConfig c = TestServers.config(dir.resolve("data"), 0);
        server = PushServer.start(c.withAuth(new AuthSettings(AuthConfig.Mode.JWT,
                AuthConfig.Jwt.defaults().withJwksFile(jwks.toString()).withLeeway(Duration.ZERO))));
        resources = ClientResources.create(1);
    }

    @AfterEach
    void stop() {
        resources.close();
        server.close();
    }

    private String token(Duration life) throws Exception {
        return token(life, key, List.of("t"));
    }

    private static String token(Duration life, OctetSequenceKey signer, List<String> topics) throws Exception {
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("user-1").expirationTime(Date.from(Instant.now().plus(life)))
                .claim("topics", topics).claim("publish", List.of("t")).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("k1").build(), claims);
        jwt.sign(new MACSigner(signer));
        return jwt.serialize();
    }

    /** A token the server cannot verify: signed with another key of the same id. */
    private static String forged() throws Exception {
        return token(Duration.ofMinutes(1), new OctetSequenceKeyGenerator(256).keyID("k1").generate(), List.of("t"));
    }

    /** Waits {@code d}, long enough for several attempts at the test's 100-400 ms backoff. */
    private static void several(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    private void publish(int n) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/v1/topics/t/events"))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + token(Duration.ofMinutes(1)))
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":" + n + "}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(201);
    }

    private PushClientOptions.Builder options() {
        return PushClientOptions.builder("127.0.0.1", server.port()).topic("t")
                .baseDelay(Duration.ofMillis(100)).maxDelay(Duration.ofMillis(400));
    }

    @Test
    void anExpiredSessionReconnectsAtOnceWithTheSuppliersNewTokenAndMissesNothing() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        PushClient client = resources.newClient(options().accessToken(() -> {
            asked.incrementAndGet();
            try {
                return token(Duration.ofMillis(1500));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        for (int i = 1; i <= 20; i++) {
            publish(i);
            Thread.sleep(150); // spread over two expiries
        }
        Recorder.await("20 events", WAIT, () -> recorder.events.size() >= 20);
        assertThat(recorder.closes).extracting(Recorder.Close::code).contains(CloseCode.TOKEN_EXPIRED.code());
        assertThat(asked.get()).isGreaterThanOrEqualTo(2);
        assertThat(recorder.seqs()).containsExactlyElementsOf(LongStream.rangeClosed(1, 20).boxed().toList());
        assertThat(client.options().toString()).doesNotContain("eyJ");
    }

    @Test
    void aRefreshInBandKeepsTheSessionPastTheFirstTokensExpiry() throws Exception {
        PushClient client = resources.newClient(options().accessToken(() -> {
            try {
                return token(Duration.ofSeconds(4));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        assertThat(client.refresh(token(Duration.ofMinutes(1)))).isTrue();
        Thread.sleep(4_500); // past the first token's exp
        publish(1);
        Recorder.await("the event", WAIT, () -> recorder.events.size() == 1);
        assertThat(recorder.closes).isEmpty();
        assertThat(recorder.connected).hasSize(1);
    }

    @Test
    void aClientWithoutATokenIsRefusedOnceAndStopsInsteadOfRetrying() throws Exception {
        PushClient client = resources.newClient(options().build(), recorder).start();
        Recorder.await("the 401", WAIT, () -> !recorder.denials.isEmpty());
        several(Duration.ofMillis(1500));
        assertThat(recorder.denials).containsExactly("401 missing_token");
        assertThat(client.connectAttempts()).isEqualTo(1);
        assertThat(client.state()).isEqualTo(ClientState.CLOSED);
        assertThat(recorder.connected).isEmpty();
    }

    @Test
    void aSupplierThatGivesTheRefusedTokenAgainStopsTheClientBeforeItIsSentTwice() throws Exception {
        String bad = forged();
        PushClient client = resources.newClient(options().accessToken(() -> bad).build(), recorder).start();
        Recorder.await("stopped", WAIT, () -> client.state() == ClientState.CLOSED);
        several(Duration.ofMillis(1000));
        assertThat(recorder.denials).containsExactly("401 invalid_token");
        assertThat(client.connectAttempts()).isEqualTo(1);
    }

    @Test
    void aSupplierWithANewTokenAfterA401IsTriedAgainAndTheClientSubscribes() throws Exception {
        String bad = forged();
        AtomicInteger asked = new AtomicInteger();
        PushClient client = resources.newClient(options().accessToken(() -> {
            try {
                return asked.getAndIncrement() == 0 ? bad : token(Duration.ofMinutes(1));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        assertThat(recorder.denials).containsExactly("401 invalid_token");
        assertThat(client.state()).isEqualTo(ClientState.CONNECTED);
        publish(1);
        Recorder.await("the event", WAIT, () -> recorder.events.size() == 1);
    }

    @Test
    void aTopicOutsideTheTokensClaimsIs403AndTheClientStops() throws Exception {
        String other = token(Duration.ofMinutes(1), key, List.of("other"));
        PushClient client = resources.newClient(options().accessToken(() -> other).build(), recorder).start();
        Recorder.await("stopped", WAIT, () -> client.state() == ClientState.CLOSED);
        assertThat(recorder.denials).containsExactly("403 topic_not_allowed");
        assertThat(client.connectAttempts()).isEqualTo(1);
    }

    @Test
    void anSseClientWithoutATokenStopsAfterIts401Too() throws Exception {
        PushClient client = resources.newClient(options().transport(Transport.SSE).build(), recorder).start();
        Recorder.await("stopped", WAIT, () -> client.state() == ClientState.CLOSED);
        several(Duration.ofMillis(1000));
        assertThat(recorder.denials).containsExactly("401 missing_token");
        assertThat(client.connectAttempts()).isEqualTo(1);
    }

    @Test
    void aSupplierThatThrowsForAWhileIsAskedAgainAndTheClientSubscribesOnceItGivesAToken() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        PushClient client = resources.newClient(options().accessToken(() -> {
            if (asked.getAndIncrement() < 3) {
                throw new IllegalStateException("token service away");
            }
            try {
                return token(Duration.ofMinutes(1));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).build(), recorder).start();
        Recorder.await("subscribed", WAIT, () -> recorder.subscribed.size() == 1);
        assertThat(recorder.denials).hasSize(3).allMatch(d -> d.equals("401 missing_token"));
        assertThat(client.state()).isEqualTo(ClientState.CONNECTED);
    }
}
