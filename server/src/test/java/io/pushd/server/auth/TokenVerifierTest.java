package io.pushd.server.auth;

import static io.pushd.server.auth.TestKeys.b64;
import static io.pushd.server.auth.TestKeys.claims;
import static io.pushd.server.auth.TestKeys.sign;
import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TokenVerifierTest {

    static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    static final OctetSequenceKey HMAC = TestKeys.hmac("h1");
    static final RSAKey RSA = TestKeys.rsa("r1");
    static final ECKey EC = TestKeys.ec("e1");
    static final TestKeys.Ed ED = TestKeys.ed25519("d1");

    final AtomicInteger unknownKeySeen = new AtomicInteger();

    TokenVerifier verifier(AuthConfig.Jwt config, KeySet keys) {
        return new TokenVerifier(config, () -> keys, unknownKeySeen::incrementAndGet, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    TokenVerifier verifier(KeySet keys) {
        return verifier(AuthConfig.Jwt.defaults(), keys);
    }

    TokenVerifier all() {
        return verifier(TestKeys.keySet(HMAC, RSA, EC, ED.publicJwk()));
    }

    static AuthResult verify(TokenVerifier v, String token) {
        return v.verify(BearerToken.of(token));
    }

    static DenialReason reason(AuthResult r) {
        assertThat(r).isInstanceOf(Denial.class);
        return ((Denial) r).reason();
    }

    @Test
    void aTokenSignedWithAConfiguredSecretGrantsItsSubjectAndTopics() {
        AuthResult r = verify(all(), sign(HMAC, JWSAlgorithm.HS256, claims(NOW).build()));
        assertThat(r).isInstanceOf(Grant.class);
        Grant g = (Grant) r;
        assertThat(g.subject()).isEqualTo("user-1");
        assertThat(g.maySubscribe("orders.eu")).isTrue();
        assertThat(g.maySubscribe("news")).isTrue();
        assertThat(g.maySubscribe("orders")).isFalse();
        assertThat(g.mayPublish("chat.room1")).isTrue();
        assertThat(g.mayPublish("news")).isFalse();
        assertThat(g.expiresAt()).isEqualTo(NOW.plusSeconds(600).plus(AuthConfig.Jwt.DEFAULT_LEEWAY));
    }

    @Test
    void everySupportedAlgorithmVerifiesWithItsKey() {
        TokenVerifier v = all();
        JWTClaimsSet c = claims(NOW).build();
        for (JWSAlgorithm alg : List.of(JWSAlgorithm.HS256, JWSAlgorithm.HS384, JWSAlgorithm.HS512)) {
            assertThat(verify(v, sign(HMAC, alg, c))).as(alg.getName()).isInstanceOf(Grant.class);
        }
        for (JWSAlgorithm alg : List.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512,
                JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512)) {
            assertThat(verify(v, sign(RSA, alg, c))).as(alg.getName()).isInstanceOf(Grant.class);
        }
        assertThat(verify(v, sign(EC, JWSAlgorithm.ES256, c))).isInstanceOf(Grant.class);
        assertThat(verify(v, TestKeys.signEd(ED, JWSAlgorithm.EdDSA, c))).isInstanceOf(Grant.class);
        assertThat(verify(v, TestKeys.signEd(ED, JWSAlgorithm.Ed25519, c))).isInstanceOf(Grant.class);
    }

    @Test
    void aForgedSignatureIsRefused() {
        TokenVerifier v = all();
        JWTClaimsSet c = claims(NOW).build();
        // signed by a secret of the right kid that the server does not have
        OctetSequenceKey other = TestKeys.hmac("h1");
        assertThat(reason(verify(v, sign(other, JWSAlgorithm.HS256, c)))).isEqualTo(DenialReason.BAD_SIGNATURE);
        // a genuine token whose claims were edited (more topics) after signing
        String genuine = sign(RSA, JWSAlgorithm.RS256, c);
        String[] parts = genuine.split("\\.");
        String widened = b64(claims(NOW).claim("topics", List.of("*")).build().toString());
        assertThat(reason(verify(v, parts[0] + "." + widened + "." + parts[2]))).isEqualTo(DenialReason.BAD_SIGNATURE);
        // signature bytes flipped, for each key type
        for (String t : List.of(genuine, sign(EC, JWSAlgorithm.ES256, c), TestKeys.signEd(ED, JWSAlgorithm.EdDSA, c),
                sign(HMAC, JWSAlgorithm.HS512, c))) {
            String[] p = t.split("\\.");
            byte[] sig = Base64.getUrlDecoder().decode(p[2]);
            sig[sig.length / 2] ^= 1;
            String flipped = p[0] + "." + p[1] + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(sig);
            assertThat(reason(verify(v, flipped))).isEqualTo(DenialReason.BAD_SIGNATURE);
        }
        // no signature at all: nimbus does not even parse it as a JWS
        assertThat(reason(verify(v, parts[0] + "." + parts[1] + "."))).isEqualTo(DenialReason.MALFORMED);
    }

    @Test
    void aTokenWithAlgNoneIsRefusedInAnySpelling() {
        TokenVerifier v = all();
        String payload = b64(claims(NOW).build().toString());
        assertThat(reason(verify(v, b64("{\"alg\":\"none\"}") + "." + payload + ".")))
                .isEqualTo(DenialReason.ALGORITHM_NOT_ALLOWED);
        for (String alg : List.of("None", "NONE", "nOnE")) {
            String signed = b64("{\"alg\":\"" + alg + "\",\"kid\":\"h1\"}") + "." + payload + ".c2ln";
            assertThat(reason(verify(v, signed))).as(alg).isEqualTo(DenialReason.ALGORITHM_NOT_ALLOWED);
        }
    }

    @Test
    void anHs256TokenWhoseSecretIsTheRsaPublicKeyNeverVerifies() throws Exception {
        // the classic confusion: the attacker knows the public key and uses its bytes as an HMAC secret
        KeySet onlyRsa = TestKeys.keySet(RSA);
        TokenVerifier v = verifier(onlyRsa);
        byte[] der = RSA.toRSAPublicKey().getEncoded();
        String pem = "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END PUBLIC KEY-----\n";
        String jwkJson = RSA.toPublicJWK().toJSONString();
        for (byte[] secret : List.of(der, pem.getBytes(StandardCharsets.US_ASCII), jwkJson.getBytes(StandardCharsets.UTF_8),
                RSA.getModulus().decode())) {
            for (String kid : new String[] {"r1", null}) {
                SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(kid).build(),
                        claims(NOW).build());
                jwt.sign(new MACSigner(secret));
                assertThat(reason(verify(v, jwt.serialize()))).as("kid " + kid)
                        .isEqualTo(DenialReason.ALGORITHM_NOT_ALLOWED);
            }
        }
        // and the other way round: an RS256 header on a kid that names an HMAC secret
        assertThat(reason(verify(verifier(TestKeys.keySet(HMAC)), sign(RSA, JWSAlgorithm.RS256, claims(NOW).build(), "h1"))))
                .isEqualTo(DenialReason.ALGORITHM_NOT_ALLOWED);
        // an ES256 token on the RSA kid is not tried against the RSA key
        assertThat(reason(verify(all(), sign(EC, JWSAlgorithm.ES256, claims(NOW).build(), "r1"))))
                .isEqualTo(DenialReason.ALGORITHM_NOT_ALLOWED);
    }

    @Test
    void aTokenCarryingItsOwnKeyInTheHeaderIsCheckedAgainstTheConfiguredKeysOnly() throws Exception {
        RSAKey attacker = TestKeys.rsa("r1");
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("r1")
                .jwk(attacker.toPublicJWK()).build(), claims(NOW).build());
        jwt.sign(new com.nimbusds.jose.crypto.RSASSASigner(attacker));
        assertThat(reason(verify(all(), jwt.serialize()))).isEqualTo(DenialReason.BAD_SIGNATURE);
    }

    @Test
    void anExpiredTokenIsRefusedButOneExpiredWithinTheLeewayIsAccepted() {
        TokenVerifier v = all();
        String longGone = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).expirationTime(Date.from(NOW.minusSeconds(31))).build());
        assertThat(reason(verify(v, longGone))).isEqualTo(DenialReason.EXPIRED);
        String atTheEdge = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).expirationTime(Date.from(NOW.minusSeconds(30))).build());
        assertThat(reason(verify(v, atTheEdge))).as("exp + leeway == now is past").isEqualTo(DenialReason.EXPIRED);
        String justNow = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).expirationTime(Date.from(NOW.minusSeconds(10))).build());
        Grant g = (Grant) verify(v, justNow);
        assertThat(g.expiresAt()).isEqualTo(NOW.plusSeconds(20));
        assertThat(g.isExpiredAt(NOW)).isFalse();
        assertThat(g.isExpiredAt(NOW.plusSeconds(21))).isTrue();

        TokenVerifier strict = verifier(AuthConfig.Jwt.defaults().withLeeway(Duration.ZERO), TestKeys.keySet(HMAC));
        assertThat(reason(verify(strict, justNow))).isEqualTo(DenialReason.EXPIRED);
    }

    @Test
    void aTokenNotYetValidIsRefusedButOneWithinTheLeewayIsAccepted() {
        TokenVerifier v = all();
        String later = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).notBeforeTime(Date.from(NOW.plusSeconds(31))).build());
        assertThat(reason(verify(v, later))).isEqualTo(DenialReason.NOT_YET_VALID);
        String soon = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).notBeforeTime(Date.from(NOW.plusSeconds(25))).build());
        assertThat(verify(v, soon)).isInstanceOf(Grant.class);
        String past = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).notBeforeTime(Date.from(NOW.minusSeconds(60))).build());
        assertThat(verify(v, past)).isInstanceOf(Grant.class);
    }

    @Test
    void anNbfOrExpSoFarAheadThatItsMillisecondsOverflowIsNotReadAsLongPast() {
        TokenVerifier v = all();
        long overflowing = Long.MAX_VALUE / 1000 + 1; // seconds whose milliseconds wrap to a negative long
        String nbf = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).claim("nbf", overflowing).build());
        assertThat(reason(verify(v, nbf))).isEqualTo(DenialReason.BAD_CLAIMS);
        String exp = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).claim("exp", overflowing).build());
        assertThat(reason(verify(v, exp))).isEqualTo(DenialReason.BAD_CLAIMS);
        String year9999 = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).claim("exp", TokenVerifier.MAX_NUMERIC_DATE).build());
        assertThat(verify(v, year9999)).isInstanceOf(Grant.class);
    }

    @Test
    void theIssuerAndAudienceAreCheckedWhenConfigured() {
        TokenVerifier v = verifier(AuthConfig.Jwt.defaults().withIssuer("https://id.example", "push"), TestKeys.keySet(HMAC));
        JWTClaimsSet.Builder ok = claims(NOW).issuer("https://id.example").audience(List.of("other", "push"));
        assertThat(verify(v, sign(HMAC, JWSAlgorithm.HS256, ok.build()))).isInstanceOf(Grant.class);
        assertThat(verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).issuer("https://id.example").audience("push").build())))
                .isInstanceOf(Grant.class);
        assertThat(reason(verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).issuer("https://evil.example").audience("push").build()))))
                .isEqualTo(DenialReason.WRONG_ISSUER);
        assertThat(reason(verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).audience("push").build()))))
                .as("no iss").isEqualTo(DenialReason.WRONG_ISSUER);
        assertThat(reason(verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).issuer("https://id.example").audience("pus").build()))))
                .isEqualTo(DenialReason.WRONG_AUDIENCE);
        assertThat(reason(verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).issuer("https://id.example").build()))))
                .as("no aud").isEqualTo(DenialReason.WRONG_AUDIENCE);
        // unconfigured: anything goes
        assertThat(verify(verifier(TestKeys.keySet(HMAC)), sign(HMAC, JWSAlgorithm.HS256,
                claims(NOW).issuer("whoever").audience("whatever").build()))).isInstanceOf(Grant.class);
    }

    @Test
    void aTokenWithoutExpIsRefusedUnlessConfiguredOtherwise() {
        String forever = sign(HMAC, JWSAlgorithm.HS256, claims(NOW).expirationTime(null).build());
        assertThat(reason(verify(all(), forever))).isEqualTo(DenialReason.NO_EXPIRY);
        TokenVerifier lenient = verifier(AuthConfig.Jwt.defaults().withRequireExp(false), TestKeys.keySet(HMAC));
        Grant g = (Grant) verify(lenient, forever);
        assertThat(g.expiresAt()).isNull();
        assertThat(g.isExpiredAt(Instant.MAX)).isFalse();
    }

    @Test
    void anUnknownKidIsRefusedAndAsksTheKeySourceForAnEarlyRefresh() {
        String stranger = sign(TestKeys.hmac("h9"), JWSAlgorithm.HS256, claims(NOW).build());
        assertThat(reason(verify(all(), stranger))).isEqualTo(DenialReason.UNKNOWN_KEY);
        assertThat(unknownKeySeen).hasValue(1);
        assertThat(reason(verify(verifier(KeySet.EMPTY), sign(HMAC, JWSAlgorithm.HS256, claims(NOW).build(), null))))
                .as("no keys loaded").isEqualTo(DenialReason.UNKNOWN_KEY);
    }

    @Test
    void twoKeysOfOneTypeAtOnceEachVerifyTheirOwnTokensDuringARotation() {
        OctetSequenceKey old = TestKeys.hmac("2025");
        OctetSequenceKey next = TestKeys.hmac("2026");
        RSAKey rOld = TestKeys.rsa("r-old");
        RSAKey rNext = TestKeys.rsa("r-next");
        TokenVerifier v = verifier(TestKeys.keySet(old, next, rOld, rNext));
        JWTClaimsSet c = claims(NOW).build();
        for (var k : List.of(old, next)) {
            assertThat(verify(v, sign(k, JWSAlgorithm.HS256, c))).isInstanceOf(Grant.class);
            assertThat(verify(v, sign(k, JWSAlgorithm.HS256, c, null))).as("no kid: every oct key is tried")
                    .isInstanceOf(Grant.class);
        }
        for (var k : List.of(rOld, rNext)) {
            assertThat(verify(v, sign(k, JWSAlgorithm.RS256, c))).isInstanceOf(Grant.class);
            assertThat(verify(v, sign(k, JWSAlgorithm.PS384, c, null))).isInstanceOf(Grant.class);
        }
        // a kid names one key: the other key's token under that kid does not verify
        assertThat(reason(verify(v, sign(next, JWSAlgorithm.HS256, c, "2025")))).isEqualTo(DenialReason.BAD_SIGNATURE);
        // after the old key is removed its tokens stop working
        TokenVerifier rotated = verifier(TestKeys.keySet(next));
        assertThat(reason(verify(rotated, sign(old, JWSAlgorithm.HS256, c)))).isEqualTo(DenialReason.UNKNOWN_KEY);
        assertThat(reason(verify(rotated, sign(old, JWSAlgorithm.HS256, c, null)))).isEqualTo(DenialReason.BAD_SIGNATURE);
    }

    @Test
    void aTokenThatIsNotACompactJwsIsMalformed() {
        TokenVerifier v = all();
        for (String t : List.of("", "abc", "a.b", "a.b.c", "!!.??.##", b64("[1]") + "." + b64("{}") + ".",
                b64("{\"alg\":\"RSA-OAEP\",\"enc\":\"A128GCM\"}") + ".a.b.c.d")) {
            assertThat(reason(verify(v, t))).as(t).isEqualTo(DenialReason.MALFORMED);
        }
        assertThat(reason(verify(v, "a".repeat(TokenCarrier.MAX_TOKEN_LENGTH + 1)))).isEqualTo(DenialReason.MALFORMED);
    }

    @Test
    void aCriticalHeaderExtensionIsRefused() throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("h1")
                .criticalParams(java.util.Set.of("exp")).customParam("exp", 1).build(), claims(NOW).build());
        jwt.sign(new MACSigner(HMAC));
        assertThat(reason(verify(all(), jwt.serialize()))).isEqualTo(DenialReason.MALFORMED);
    }

    @Test
    void anEmptyCriticalHeaderListIsRefusedAsRfc7515ForbidsIt() throws Exception {
        String payload = claims(NOW).build().toString();
        assertThat(reason(verify(all(), hs256ByHand("{\"alg\":\"HS256\",\"kid\":\"h1\",\"crit\":[]}", payload))))
                .isEqualTo(DenialReason.MALFORMED);
        assertThat(verify(all(), hs256ByHand("{\"alg\":\"HS256\",\"kid\":\"h1\"}", payload)))
                .as("the same token without crit").isInstanceOf(Grant.class);
    }

    @Test
    void aNumericSubjectIsRefusedRatherThanReadAsTheStringOfItsDigits() throws Exception {
        String payload = claims(NOW).build().toString().replace("\"sub\":\"", "\"sub\":\"x");
        assertThat(payload).contains("\"sub\":\"x");
        String numeric = payload.replaceFirst("\"sub\":\"[^\"]*\"", "\"sub\":42");
        assertThat(reason(verify(all(), hs256ByHand("{\"alg\":\"HS256\",\"kid\":\"h1\"}", numeric))))
                .isEqualTo(DenialReason.BAD_CLAIMS);
        String string = payload.replaceFirst("\"sub\":\"[^\"]*\"", "\"sub\":\"42\"");
        assertThat(((Grant) verify(all(), hs256ByHand("{\"alg\":\"HS256\",\"kid\":\"h1\"}", string))).subject())
                .isEqualTo("42");
    }

    /** A compact HS256 JWS of exactly these header and payload JSON texts, signed with {@link #HMAC}. */
    static String hs256ByHand(String headerJson, String payloadJson) throws Exception {
        String input = b64(headerJson) + "." + b64(payloadJson);
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(HMAC.toByteArray(), "HmacSHA256"));
        return input + "." + Base64.getUrlEncoder().withoutPadding()
                .encodeToString(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void claimsOfTheWrongShapeAreRefused() {
        TokenVerifier v = all();
        List<JWTClaimsSet> bad = List.of(
                claims(NOW).subject(null).build(),
                claims(NOW).subject("").build(),
                claims(NOW).subject("a\nb").build(),
                claims(NOW).subject("x".repeat(257)).build(),
                claims(NOW).claim("topics", "orders").build(),
                claims(NOW).claim("topics", List.of("ord*")).build(),
                claims(NOW).claim("topics", List.of(1)).build(),
                claims(NOW).claim("publish", List.of("a b")).build(),
                claims(NOW).claim("publish", java.util.Map.of("a", 1)).build());
        for (JWTClaimsSet c : bad) {
            assertThat(reason(verify(v, sign(HMAC, JWSAlgorithm.HS256, c)))).as(c.toString()).isEqualTo(DenialReason.BAD_CLAIMS);
        }
        Grant none = (Grant) verify(v, sign(HMAC, JWSAlgorithm.HS256, claims(NOW).claim("topics", null).claim("publish", null).build()));
        assertThat(none.maySubscribe("news")).as("no topics claim: nothing").isFalse();
        assertThat(none.mayPublish("news")).isFalse();
    }

    @Test
    void denialReasonCodesAreDistinctLowerCaseWords() {
        assertThat(java.util.Arrays.stream(DenialReason.values()).map(DenialReason::code).distinct().count())
                .isEqualTo(DenialReason.values().length);
        for (DenialReason r : DenialReason.values()) {
            assertThat(r.code()).matches("[a-z_]+").isEqualTo(r.name().toLowerCase(java.util.Locale.ROOT));
        }
    }
}
