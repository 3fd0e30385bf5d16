package io.pushd.server.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.KeyOperation;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.JSONObjectUtils;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An immutable, verified-ready snapshot of a JWK set: each key paired with the algorithms it may
 * verify and a ready verifier, so a token costs one signature check and no key parsing.
 *
 * <p>Each key type is bound to its own algorithm family: {@code oct} to HS*, {@code RSA} to RS*
 * and PS*, {@code EC} to the ES* of its curve, {@code OKP} Ed25519 to EdDSA. That binding is what
 * stops algorithm confusion: an HS256 token is only ever checked against {@code oct} secrets,
 * never with an RSA public key's bytes as an HMAC secret. A JWK's own {@code alg} narrows the
 * family to that one algorithm.
 *
 * <p>Nothing here logs or throws key material: messages name the key by position, {@code kid}
 * and type only.
 */
public final class KeySet {

    private static final Logger log = LoggerFactory.getLogger(KeySet.class);

    static final KeySet EMPTY = new KeySet(List.of());

    private static final Set<JWSAlgorithm> RSA_ALGS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384,
            JWSAlgorithm.RS512, JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512);
    /** The NIST SP 800-131A floor; shorter RSA keys are factorable by a determined attacker. */
    private static final int MIN_RSA_BITS = 2048;
    private static final int MAX_KEYS = 100;

    /** One usable key. {@code kid} may be null (a set of one key often has none). */
    record Entry(String kid, String type, Set<JWSAlgorithm> algorithms, JWSVerifier verifier) {
        /** For logs: the kid and the type, never the key. */
        String describe() {
            return (kid == null ? "(no kid)" : safe(kid)) + " " + type;
        }
    }

    /** A set that cannot be used; the message is safe to log (no key material). */
    static final class InvalidKeySetException extends Exception {
        InvalidKeySetException(String message) {
            super(message, null, false, false);
        }
    }

    private final List<Entry> entries;

    private KeySet(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    List<Entry> entries() {
        return entries;
    }

    public int size() {
        return entries.size();
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The keys as {@code kid type} pairs, for logs. */
    public String describe() {
        return entries.isEmpty() ? "no keys" : entries.stream().map(Entry::describe).collect(Collectors.joining(", "));
    }

    KeySet plus(KeySet other) {
        if (other.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return other;
        }
        List<Entry> all = new ArrayList<>(entries);
        all.addAll(other.entries);
        return new KeySet(all);
    }

    /**
     * Parses a JWK set document ({@code {"keys":[…]}}). Keys for encryption ({@code use: enc}, or
     * {@code key_ops} without {@code verify}) and key types this server does not verify with
     * (Ed448, X25519, secp256k1) are skipped with a log line; a key that is broken (bad encoding, an
     * HMAC secret shorter than its algorithm's hash, an RSA modulus under 2048 bits, a point off its
     * curve, an {@code alg} its type is not for) refuses the whole set, so a typo never silently
     * leaves tokens unverifiable.
     */
    static KeySet parse(String json) throws InvalidKeySetException {
        Map<String, Object> doc;
        try {
            doc = JSONObjectUtils.parse(json);
        } catch (java.text.ParseException | RuntimeException e) {
            throw new InvalidKeySetException("not a JSON object");
        }
        Object keys = doc.get("keys");
        if (!(keys instanceof List<?> list)) {
            throw new InvalidKeySetException("no \"keys\" array");
        }
        if (list.size() > MAX_KEYS) {
            throw new InvalidKeySetException(list.size() + " keys (expected: at most " + MAX_KEYS + ")");
        }
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            Entry e = entry(i, list.get(i));
            if (e != null) {
                out.add(e);
            }
        }
        if (out.isEmpty()) {
            throw new InvalidKeySetException("no key usable for verifying signatures");
        }
        return new KeySet(out);
    }

    @SuppressWarnings("unchecked")
    private static Entry entry(int i, Object raw) throws InvalidKeySetException {
        if (!(raw instanceof Map<?, ?> map)) {
            throw new InvalidKeySetException("key #" + i + ": not a JSON object");
        }
        Object kidValue = map.get("kid");
        String kid = kidValue instanceof String s ? s : null;
        String name = "key #" + i + (kid == null ? "" : " (kid " + safe(kid) + ")");
        JWK jwk;
        try {
            jwk = JWK.parse((Map<String, Object>) map);
        } catch (java.text.ParseException | RuntimeException e) {
            // nimbus's message may quote the member it choked on: say only which key and its type
            throw new InvalidKeySetException(name + ": not a valid " + safe(String.valueOf(map.get("kty"))) + " JWK");
        }
        if (jwk.getKeyUse() != null && !KeyUse.SIGNATURE.equals(jwk.getKeyUse())) {
            log.debug("{}: use is not sig, skipped", name);
            return null;
        }
        if (jwk.getKeyOperations() != null && !jwk.getKeyOperations().contains(KeyOperation.VERIFY)) {
            log.debug("{}: key_ops without verify, skipped", name);
            return null;
        }
        try {
            Entry e = build(name, kid, jwk);
            if (e == null) {
                return null;
            }
            if (jwk.getAlgorithm() != null) {
                JWSAlgorithm only = JWSAlgorithm.parse(jwk.getAlgorithm().getName());
                if (!e.algorithms().contains(only)) {
                    throw new InvalidKeySetException(name + ": alg " + safe(only.getName()) + " is not for a "
                            + e.type() + " key");
                }
                e = new Entry(kid, e.type(), Set.of(only), e.verifier());
            }
            return e;
        } catch (JOSEException | GeneralSecurityException | RuntimeException ex) {
            throw new InvalidKeySetException(name + ": unusable " + jwk.getKeyType() + " key");
        }
    }

    private static Entry build(String name, String kid, JWK jwk) throws JOSEException, GeneralSecurityException,
            InvalidKeySetException {
        KeyType kty = jwk.getKeyType();
        if (KeyType.OCT.equals(kty)) {
            byte[] secret = ((OctetSequenceKey) jwk).toByteArray();
            // RFC 7518 section 3.2: the secret must be at least as long as the hash
            Set<JWSAlgorithm> algs = new LinkedHashSet<>();
            if (secret.length >= 32) {
                algs.add(JWSAlgorithm.HS256);
            }
            if (secret.length >= 48) {
                algs.add(JWSAlgorithm.HS384);
            }
            if (secret.length >= 64) {
                algs.add(JWSAlgorithm.HS512);
            }
            if (algs.isEmpty()) {
                throw new InvalidKeySetException(name + ": oct secret of " + secret.length
                        + " bytes (expected: at least 32 for HS256)");
            }
            return new Entry(kid, "oct", Set.copyOf(algs), new MACVerifier(secret));
        }
        if (KeyType.RSA.equals(kty)) {
            RSAKey rsa = (RSAKey) jwk;
            if (rsa.isPrivate()) {
                log.warn("{}: the JWK set holds an RSA private key; only its public part is used, "
                        + "and the private part should not be on this server", name);
            }
            int bits = rsa.size();
            if (bits < MIN_RSA_BITS) {
                throw new InvalidKeySetException(name + ": RSA key of " + bits + " bits (expected: >= "
                        + MIN_RSA_BITS + ")");
            }
            return new Entry(kid, "RSA " + bits, RSA_ALGS, new RSASSAVerifier(rsa.toRSAPublicKey()));
        }
        if (KeyType.EC.equals(kty)) {
            ECKey ec = (ECKey) jwk;
            if (ec.isPrivate()) {
                log.warn("{}: the JWK set holds an EC private key; only its public part is used, "
                        + "and the private part should not be on this server", name);
            }
            Curve crv = ec.getCurve();
            JWSAlgorithm alg = Curve.P_256.equals(crv) ? JWSAlgorithm.ES256
                    : Curve.P_384.equals(crv) ? JWSAlgorithm.ES384
                    : Curve.P_521.equals(crv) ? JWSAlgorithm.ES512 : null;
            if (alg == null) {
                // secp256k1 (ES256K) left the JDK's SunEC in Java 16
                log.warn("{}: EC curve {} is not supported, skipped", name, crv);
                return null;
            }
            return new Entry(kid, "EC " + crv, Set.of(alg), new ECDSAVerifier(ec.toECPublicKey()));
        }
        if (KeyType.OKP.equals(kty)) {
            OctetKeyPair okp = (OctetKeyPair) jwk;
            if (okp.isPrivate()) {
                log.warn("{}: the JWK set holds an OKP private key; only its public part is used, "
                        + "and the private part should not be on this server", name);
            }
            if (!Curve.Ed25519.equals(okp.getCurve())) {
                log.warn("{}: OKP curve {} is not supported (Ed25519 only), skipped", name, okp.getCurve());
                return null;
            }
            return new Entry(kid, "OKP Ed25519", Ed25519JdkVerifier.ALGORITHMS,
                    new Ed25519JdkVerifier(okp.getX().decode()));
        }
        log.warn("{}: key type {} is not supported, skipped", name, kty);
        return null;
    }

    /** A kid or member as it may appear in a log line: printable, bounded. */
    static String safe(String s) {
        String t = s.length() > 64 ? s.substring(0, 64) + "…" : s;
        return t.replaceAll("[^\\x21-\\x7e]", "?");
    }
}
