package io.pushd.loadtest.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The keys and tokens a run hands out, checked with nimbus as an independent verifier. */
class TokensTest {

    private static final List<String> TOPICS = List.of("lt-x-0", "lt-x-1", "lt-x-2");

    @Test
    void hs256TokensVerifyAgainstTheSecretInTheJwkSetAndNameOneSubAndOneTopicPerClient() throws Exception {
        Path jwks;
        try (Tokens tokens = Tokens.create(TokenMode.hs256, Duration.ofHours(2))) {
            jwks = jwksFile(tokens);
            OctetSequenceKey secret = JWKSet.load(jwks.toFile()).getKeys().get(0).toOctetSequenceKey();
            assertThat(secret.size()).isEqualTo(256);

            String[] clients = tokens.forClients(5, TOPICS);
            for (int i = 0; i < 5; i++) {
                SignedJWT jwt = SignedJWT.parse(clients[i]);
                assertThat(jwt.getHeader().getAlgorithm()).isEqualTo(JWSAlgorithm.HS256);
                assertThat(jwt.getHeader().getKeyID()).isEqualTo(secret.getKeyID());
                assertThat(jwt.verify(new MACVerifier(secret))).isTrue();
                JWTClaimsSet c = jwt.getJWTClaimsSet();
                assertThat(c.getSubject()).isEqualTo("lt-client-" + i);
                assertThat(c.getStringListClaim("topics")).containsExactly(TOPICS.get(i % 3));
                assertThat(c.getClaim("publish")).isNull();
                assertThat(c.getExpirationTime()).isAfter(new Date(System.currentTimeMillis() + 3_600_000));
            }
            SignedJWT pub = SignedJWT.parse(tokens.forPublisher(TOPICS));
            assertThat(pub.verify(new MACVerifier(secret))).isTrue();
            assertThat(pub.getJWTClaimsSet().getStringListClaim("publish")).containsExactlyElementsOf(TOPICS);
            // it reads the heads too: GET /v1/topics/{topic} needs the topic in topics
            assertThat(pub.getJWTClaimsSet().getStringListClaim("topics")).containsExactlyElementsOf(TOPICS);
            assertThat(tokens.serverSets()).containsExactly("auth.mode=jwt", "auth.jwt.jwksFile=" + jwks);
            assertThat(tokens.describe()).contains("hs256").doesNotContain(secret.getKeyValue().toString());
        }
        assertThat(jwks).doesNotExist();
        assertThat(jwks.getParent()).doesNotExist();
    }

    @Test
    void rs256JwkSetHoldsThePublicKeyOnlyAndTheTokensVerifyWithIt() throws Exception {
        try (Tokens tokens = Tokens.create(TokenMode.rs256, Duration.ofHours(1))) {
            Path jwks = jwksFile(tokens);
            assertThat(Files.readString(jwks)).doesNotContain("\"d\"", "\"p\"", "\"q\"");
            RSAKey key = JWKSet.load(jwks.toFile()).getKeys().get(0).toRSAKey();
            assertThat(key.isPrivate()).isFalse();
            assertThat(key.size()).isEqualTo(2048);
            SignedJWT jwt = SignedJWT.parse(tokens.forClients(1, TOPICS)[0]);
            assertThat(jwt.getHeader().getAlgorithm()).isEqualTo(JWSAlgorithm.RS256);
            assertThat(jwt.verify(new RSASSAVerifier(key))).isTrue();
        }
    }

    @Test
    void modeNoneGivesNoTokensAndNoServerSettings() throws Exception {
        try (Tokens tokens = Tokens.create(TokenMode.none, Duration.ofHours(1))) {
            assertThat(tokens.serverSets()).isEmpty();
            assertThat(tokens.forClients(3, TOPICS)).containsOnlyNulls();
            assertThat(tokens.forPublisher(TOPICS)).isNull();
        }
    }

    private static Path jwksFile(Tokens tokens) {
        String set = tokens.serverSets().get(1);
        return Path.of(set.substring(set.indexOf('=') + 1));
    }
}
