package io.pushd.server.auth;

import com.nimbusds.jose.Algorithm;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.HeaderParameterNames;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimNames;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Verifies a bearer token locally, against the keys in memory: no network call per token, so a
 * reconnect wave after a restart costs the application's backend nothing.
 *
 * <p>Order of checks: shape and header ({@code alg: none} and unknown algorithms refused), key
 * choice (by {@code kid}; without one, every key whose type fits the algorithm), signature, then
 * the claims ({@code exp}, {@code nbf} with the leeway, {@code iss}, {@code aud}, {@code sub},
 * {@code topics}, {@code publish}). The claims are parsed only once the signature holds. Header
 * members that name other keys ({@code jwk}, {@code jku}, {@code x5u}, {@code x5c}) are ignored:
 * keys come from the configured set only.
 *
 * <p>Thread-safe and allocation-light; meant to be called on event loops.
 */
public final class TokenVerifier {

    /** Claim with the subscribe patterns. */
    public static final String CLAIM_TOPICS = "topics";
    /** Claim with the publish patterns. */
    public static final String CLAIM_PUBLISH = "publish";
    /** Far above any real claim, far below what would make a token a denial-of-service vector. */
    static final int MAX_PATTERNS = 1_000;
    static final int MAX_SUBJECT_LENGTH = 256;
    /** 9999-12-31T23:59:59Z in seconds: any later exp or nbf is not a date a token issuer means. */
    static final long MAX_NUMERIC_DATE = 253_402_300_799L;

    private final Supplier<KeySet> keys;
    private final Runnable onUnknownKey;
    private final String issuer;
    private final String audience;
    private final Duration leeway;
    private final boolean requireExp;
    private final Clock clock;

    /** Keys from a {@link KeySource}, which is asked for an early refresh when a {@code kid} is unknown. */
    public TokenVerifier(AuthConfig.Jwt config, KeySource source, Clock clock) {
        this(config, source::current, source::unknownKeySeen, clock);
    }

    TokenVerifier(AuthConfig.Jwt config, Supplier<KeySet> keys, Runnable onUnknownKey, Clock clock) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.onUnknownKey = Objects.requireNonNull(onUnknownKey, "onUnknownKey");
        this.issuer = config.issuer();
        this.audience = config.audience();
        this.leeway = config.leeway();
        this.requireExp = config.requireExp();
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public AuthResult verify(BearerToken token) {
        String compact = token.value();
        if (compact.length() > TokenCarrier.MAX_TOKEN_LENGTH) {
            return deny(DenialReason.MALFORMED);
        }
        JWT parsed;
        try {
            parsed = JWTParser.parse(compact);
        } catch (ParseException | RuntimeException e) {
            return deny(DenialReason.MALFORMED);
        }
        if (parsed instanceof PlainJWT) {
            return deny(DenialReason.ALGORITHM_NOT_ALLOWED); // alg: none
        }
        if (!(parsed instanceof SignedJWT jws)) {
            return deny(DenialReason.MALFORMED); // a JWE: this server holds no decryption keys
        }
        JWSHeader header = jws.getHeader();
        JWSAlgorithm alg = header.getAlgorithm();
        if (alg == null || Algorithm.NONE.getName().equalsIgnoreCase(alg.getName())) {
            return deny(DenialReason.ALGORITHM_NOT_ALLOWED);
        }
        if (hasCritical(header) || !header.isBase64URLEncodePayload()) {
            // RFC 7515 section 4.1.11: a critical extension we do not implement must be refused, and
            // an empty list is not allowed at all
            return deny(DenialReason.MALFORMED);
        }

        DenialReason signature = checkSignature(jws, header, alg);
        if (signature != null) {
            return deny(signature);
        }

        JWTClaimsSet claims;
        Map<String, Object> json;
        try {
            // what getJWTClaimsSet() parses, kept: nimbus turns exp and nbf into milliseconds, which
            // wrap for absurd seconds (an nbf past Long.MAX_VALUE / 1000 read as long past)
            json = jws.getPayload().toJSONObject();
            if (json == null) {
                return deny(DenialReason.MALFORMED);
            }
            claims = JWTClaimsSet.parse(json);
        } catch (ParseException | RuntimeException e) {
            return deny(DenialReason.MALFORMED);
        }
        if (json.get(JWTClaimNames.SUBJECT) != null && !(json.get(JWTClaimNames.SUBJECT) instanceof String)) {
            // RFC 7519 4.1.2: a StringOrURI; nimbus reads a number as its digits, another
            // subject's name (for refreshes and limits.maxConnectionsPerSubject)
            return deny(DenialReason.BAD_CLAIMS);
        }
        if (!numericDate(json.get("exp")) || !numericDate(json.get("nbf"))) {
            return deny(DenialReason.BAD_CLAIMS);
        }
        return checkClaims(claims);
    }

    /** Null when some key of the set verifies the signature; else why not. */
    private DenialReason checkSignature(SignedJWT jws, JWSHeader header, JWSAlgorithm alg) {
        KeySet set = keys.get();
        String kid = header.getKeyID();
        boolean kidKnown = false;
        boolean algFits = false;
        for (KeySet.Entry e : set.entries()) {
            if (kid != null && !kid.equals(e.kid())) {
                continue;
            }
            kidKnown = true;
            if (!e.algorithms().contains(alg)) {
                continue; // e.g. HS256 against an RSA key: never tried, whatever the bytes
            }
            algFits = true;
            try {
                if (e.verifier().verify(header, jws.getSigningInput(), jws.getSignature())) {
                    return null;
                }
            } catch (JOSEException | RuntimeException ex) {
                // a signature of the wrong length or encoding: just not a valid one
            }
        }
        if (kid != null && !kidKnown) {
            onUnknownKey.run();
            return DenialReason.UNKNOWN_KEY;
        }
        if (set.isEmpty()) {
            return DenialReason.UNKNOWN_KEY;
        }
        return algFits ? DenialReason.BAD_SIGNATURE : DenialReason.ALGORITHM_NOT_ALLOWED;
    }

    private AuthResult checkClaims(JWTClaimsSet claims) {
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        Instant acceptedUntil = null;
        if (exp == null) {
            if (requireExp) {
                return deny(DenialReason.NO_EXPIRY);
            }
        } else {
            acceptedUntil = exp.toInstant().plus(leeway);
            // RFC 7519 section 4.1.4: not accepted "on or after" exp
            if (!now.isBefore(acceptedUntil)) {
                return deny(DenialReason.EXPIRED);
            }
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && now.plus(leeway).isBefore(nbf.toInstant())) {
            return deny(DenialReason.NOT_YET_VALID);
        }
        if (issuer != null && !issuer.equals(claims.getIssuer())) {
            return deny(DenialReason.WRONG_ISSUER);
        }
        if (audience != null) {
            List<String> aud = claims.getAudience();
            if (aud == null || !aud.contains(audience)) {
                return deny(DenialReason.WRONG_AUDIENCE);
            }
        }
        String sub = claims.getSubject();
        if (sub == null || sub.isEmpty() || sub.length() > MAX_SUBJECT_LENGTH || hasControl(sub)) {
            return deny(DenialReason.BAD_CLAIMS);
        }
        List<TopicPattern> subscribe = patterns(claims.getClaim(CLAIM_TOPICS));
        List<TopicPattern> publish = patterns(claims.getClaim(CLAIM_PUBLISH));
        if (subscribe == null || publish == null) {
            return deny(DenialReason.BAD_CLAIMS);
        }
        return new Grant(sub, subscribe, publish, acceptedUntil);
    }

    /** Absent: no topic. An array of valid patterns: those. Anything else: null (refused). */
    private static List<TopicPattern> patterns(Object claim) {
        if (claim == null) {
            return List.of();
        }
        if (!(claim instanceof List<?> list) || list.size() > MAX_PATTERNS) {
            return null;
        }
        List<TopicPattern> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof String s)) {
                return null;
            }
            try {
                out.add(TopicPattern.parse(s));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return out;
    }

    /** Absent, or seconds within years 0-9999: whose milliseconds a long holds. */
    private static boolean numericDate(Object v) {
        return v == null || v instanceof Number n && Math.abs(n.doubleValue()) <= MAX_NUMERIC_DATE;
    }

    private static boolean hasControl(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isISOControl(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    private static Denial deny(DenialReason reason) {
        return new Denial(reason);
    }

    /**
     * Whether the header has {@code crit} at all: Nimbus drops an empty list, which RFC 7515 4.1.11
     * forbids, so the header as sent is read when it names one.
     */
    private static boolean hasCritical(JWSHeader header) {
        if (header.getCriticalParams() != null) {
            return true;
        }
        String raw = header.getParsedBase64URL() == null ? "" : header.getParsedBase64URL().decodeToString();
        if (!raw.contains(HeaderParameterNames.CRITICAL)) {
            return false;
        }
        try {
            return JSONObjectUtils.parse(raw).containsKey(HeaderParameterNames.CRITICAL);
        } catch (ParseException e) {
            return true;
        }
    }
}
