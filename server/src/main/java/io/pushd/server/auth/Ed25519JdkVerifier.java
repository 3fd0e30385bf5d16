package io.pushd.server.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.util.Base64URL;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.spec.X509EncodedKeySpec;
import java.util.Set;

/**
 * EdDSA over Ed25519 with the JDK's own provider (Java 15+). Nimbus's {@code Ed25519Verifier}
 * needs Google Tink (an optional 2.7 MB dependency, plus protobuf for parts of it) for what the
 * JDK does in a few lines; this class is the whole of that feature.
 */
final class Ed25519JdkVerifier implements JWSVerifier {

    static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);

    /** SubjectPublicKeyInfo DER up to the key: SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING (33 bytes) }. */
    private static final byte[] SPKI_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

    private final PublicKey key;
    private final JCAContext jca = new JCAContext();

    /** @param x the 32-byte public key ({@code x} of an OKP JWK with {@code crv: Ed25519}) */
    Ed25519JdkVerifier(byte[] x) throws GeneralSecurityException {
        if (x.length != 32) {
            throw new GeneralSecurityException("an Ed25519 public key has 32 bytes");
        }
        byte[] spki = new byte[SPKI_PREFIX.length + 32];
        System.arraycopy(SPKI_PREFIX, 0, spki, 0, SPKI_PREFIX.length);
        System.arraycopy(x, 0, spki, SPKI_PREFIX.length, 32);
        this.key = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
    }

    @Override
    public boolean verify(JWSHeader header, byte[] signingInput, Base64URL signature) throws JOSEException {
        if (!ALGORITHMS.contains(header.getAlgorithm())) {
            return false;
        }
        byte[] sig = signature.decode();
        if (sig.length != 64) {
            return false;
        }
        try {
            Signature v = Signature.getInstance("Ed25519");
            v.initVerify(key);
            v.update(signingInput);
            return v.verify(sig);
        } catch (SignatureException e) {
            return false;
        } catch (GeneralSecurityException e) {
            throw new JOSEException("Ed25519 not available", e);
        }
    }

    @Override
    public Set<JWSAlgorithm> supportedJWSAlgorithms() {
        return ALGORITHMS;
    }

    @Override
    public JCAContext getJCAContext() {
        return jca;
    }
}
