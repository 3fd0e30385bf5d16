package io.pushd.server.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.OctetSequenceKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** Keys made per test run, JWK sets from them, and tokens signed with them. */
final class TestKeys {

    private TestKeys() {
    }

    static OctetSequenceKey hmac(String kid) {
        try {
            return new OctetSequenceKeyGenerator(512).keyID(kid).generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    static RSAKey rsa(String kid) {
        try {
            return new RSAKeyGenerator(2048).keyID(kid).generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    static ECKey ec(String kid) {
        try {
            return new ECKeyGenerator(Curve.P_256).keyID(kid).generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An Ed25519 key made by the JDK (nimbus's generator needs Tink), as JWK plus the JDK private key. */
    record Ed(OctetKeyPair publicJwk, PrivateKey privateKey) {
    }

    static Ed ed25519(String kid) {
        try {
            KeyPair kp = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] spki = kp.getPublic().getEncoded();
            byte[] x = Arrays.copyOfRange(spki, spki.length - 32, spki.length);
            OctetKeyPair jwk = new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(x)).keyID(kid).build();
            return new Ed(jwk, kp.getPrivate());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A JWK set document of the public parts (oct keys are their secret, they have no public part). */
    static String jwks(JWK... keys) {
        List<String> parts = new ArrayList<>();
        for (JWK k : keys) {
            JWK pub = k instanceof OctetSequenceKey ? k : k.toPublicJWK();
            parts.add(pub.toJSONString());
        }
        return "{\"keys\":[" + String.join(",", parts) + "]}";
    }

    static KeySet keySet(JWK... keys) {
        try {
            return KeySet.parse(jwks(keys));
        } catch (KeySet.InvalidKeySetException e) {
            throw new IllegalStateException(e);
        }
    }

    static JWTClaimsSet.Builder claims(Instant now) {
        return new JWTClaimsSet.Builder()
                .subject("user-1")
                .expirationTime(Date.from(now.plusSeconds(600)))
                .claim("topics", List.of("orders.*", "news"))
                .claim("publish", List.of("chat.room1"));
    }

    static String sign(JWK key, JWSAlgorithm alg, JWTClaimsSet claims) {
        return sign(key, alg, claims, key.getKeyID());
    }

    static String sign(JWK key, JWSAlgorithm alg, JWTClaimsSet claims, String kid) {
        try {
            JWSSigner signer = key instanceof OctetSequenceKey o ? new MACSigner(o)
                    : key instanceof RSAKey r ? new RSASSASigner(r)
                    : new ECDSASigner((ECKey) key);
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).type(JOSEObjectType.JWT).build(), claims);
            jwt.sign(signer);
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    static String signEd(Ed key, JWSAlgorithm alg, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(key.publicJwk().getKeyID()).build(), claims);
            jwt.sign(new JdkEd25519Signer(key.privateKey()));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Signs with the JDK's Ed25519, the mirror of {@link Ed25519JdkVerifier}. */
    static final class JdkEd25519Signer implements JWSSigner {
        private final PrivateKey key;

        JdkEd25519Signer(PrivateKey key) {
            this.key = key;
        }

        @Override
        public Base64URL sign(JWSHeader header, byte[] signingInput) throws JOSEException {
            try {
                Signature s = Signature.getInstance("Ed25519");
                s.initSign(key);
                s.update(signingInput);
                return Base64URL.encode(s.sign());
            } catch (GeneralSecurityException e) {
                throw new JOSEException("sign", e);
            }
        }

        @Override
        public Set<JWSAlgorithm> supportedJWSAlgorithms() {
            return Ed25519JdkVerifier.ALGORITHMS;
        }

        @Override
        public JCAContext getJCAContext() {
            return new JCAContext();
        }
    }

    /** Base64url of a JSON text, as a JWS segment. */
    static String b64(String json) {
        return Base64URL.encode(json).toString();
    }

    static String describe(List<TopicPattern> ps) {
        return ps.stream().map(TopicPattern::toString).collect(Collectors.joining(","));
    }
}
