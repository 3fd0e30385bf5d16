package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import org.junit.jupiter.api.Test;

class KeySetTest {

    @Test
    void eachKeyTypeIsBoundToItsOwnAlgorithmFamily() throws Exception {
        KeySet set = KeySet.parse(TestKeys.jwks(TestKeys.hmac("h"), TestKeys.rsa("r"), TestKeys.ec("e"),
                TestKeys.ed25519("d").publicJwk()));
        assertThat(set.size()).isEqualTo(4);
        assertThat(set.entries().get(0).algorithms()).containsExactlyInAnyOrder(JWSAlgorithm.HS256, JWSAlgorithm.HS384,
                JWSAlgorithm.HS512);
        assertThat(set.entries().get(1).algorithms()).containsExactlyInAnyOrder(JWSAlgorithm.RS256, JWSAlgorithm.RS384,
                JWSAlgorithm.RS512, JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512);
        assertThat(set.entries().get(2).algorithms()).containsExactly(JWSAlgorithm.ES256);
        assertThat(set.entries().get(3).algorithms()).containsExactlyInAnyOrder(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);
        assertThat(set.describe()).isEqualTo("h oct, r RSA 2048, e EC P-256, d OKP Ed25519");
    }

    @Test
    void aShortHmacSecretOnlyServesTheAlgorithmsItIsLongEnoughFor() throws Exception {
        OctetSequenceKey k32 = new OctetSequenceKey.Builder(new byte[32]).keyID("k").build();
        assertThat(KeySet.parse(TestKeys.jwks(k32)).entries().get(0).algorithms()).containsExactly(JWSAlgorithm.HS256);
        OctetSequenceKey k31 = new OctetSequenceKey.Builder(new byte[31]).keyID("k").build();
        assertThatThrownBy(() -> KeySet.parse(TestKeys.jwks(k31))).isInstanceOf(KeySet.InvalidKeySetException.class)
                .hasMessage("key #0 (kid k): oct secret of 31 bytes (expected: at least 32 for HS256)");
    }

    @Test
    void aJwkAlgNarrowsTheKeyToThatAlgorithmAndMustFitItsType() throws Exception {
        OctetSequenceKey k = new OctetSequenceKey.Builder(new byte[64]).keyID("k").algorithm(JWSAlgorithm.HS512).build();
        assertThat(KeySet.parse(TestKeys.jwks(k)).entries().get(0).algorithms()).containsExactly(JWSAlgorithm.HS512);
        RSAKey r = new RSAKeyGenerator(2048).keyID("r").algorithm(JWSAlgorithm.HS256).generate();
        assertThatThrownBy(() -> KeySet.parse(TestKeys.jwks(r))).hasMessage("key #0 (kid r): alg HS256 is not for a RSA 2048 key");
    }

    @Test
    void anRsaKeyUnder2048BitsRefusesTheSet() throws Exception {
        RSAKey small = new RSAKeyGenerator(1024, true).keyID("small").generate();
        assertThatThrownBy(() -> KeySet.parse(TestKeys.jwks(small))).hasMessageContaining("1024 bits (expected: >= 2048)");
    }

    @Test
    void encryptionKeysAreSkippedAndASetWithNothingElseIsRefused() throws Exception {
        RSAKey enc = new RSAKeyGenerator(2048).keyID("enc").keyUse(KeyUse.ENCRYPTION).generate();
        KeySet set = KeySet.parse(TestKeys.jwks(enc, TestKeys.rsa("sig")));
        assertThat(set.describe()).isEqualTo("sig RSA 2048");
        assertThatThrownBy(() -> KeySet.parse(TestKeys.jwks(enc))).hasMessage("no key usable for verifying signatures");
    }

    @Test
    void aBrokenDocumentIsRefusedWithAMessageThatQuotesNoKeyMaterial() {
        String secret = Base64URL.encode(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).toString();
        String[] docs = {
            "not json " + secret,
            "{\"keys\":\"" + secret + "\"}",
            "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"a\",\"k\":7}]}",
            "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"b\",\"n\":\"" + secret + "\",\"e\":\"" + secret + "!!\"}]}",
            "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" + secret + "\",\"y\":\"" + secret + "\"}]}",
            "{\"keys\":[\"" + secret + "\"]}",
        };
        for (String d : docs) {
            assertThatThrownBy(() -> KeySet.parse(d)).as(d).isInstanceOf(KeySet.InvalidKeySetException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(secret).doesNotContain("AQID"))
                    .satisfies(e -> assertThat(e.getCause()).isNull());
        }
    }

    @Test
    void aPrivateKeyInTheSetIsUsedForItsPublicPartWithAWarningNamingOnlyTheKid() throws Exception {
        RSAKey full = TestKeys.rsa("leaky");
        try (LogCapture logs = new LogCapture()) {
            KeySet set = KeySet.parse("{\"keys\":[" + full.toJSONString() + "]}");
            assertThat(set.size()).isEqualTo(1);
            assertThat(logs.messages(Level.WARN)).singleElement().asString().contains("kid leaky")
                    .contains("private key").doesNotContain(full.getPrivateExponent().toString());
        }
    }

    @Test
    void unsupportedCurvesAreSkippedNotFatal() throws Exception {
        String ed448 = "{\"kty\":\"OKP\",\"crv\":\"Ed448\",\"kid\":\"x\",\"x\":\"" + Base64URL.encode(new byte[57]) + "\"}";
        KeySet set = KeySet.parse("{\"keys\":[" + ed448 + "," + TestKeys.hmac("h").toJSONString() + "]}");
        assertThat(set.describe()).isEqualTo("h oct");
    }

    @Test
    void kidsInLogsArePrintableAndBounded() {
        assertThat(KeySet.safe("a\nb\u0000c d")).isEqualTo("a?b?c?d");
        assertThat(KeySet.safe("k".repeat(100))).hasSize(65);
    }
}
