package io.pushd.server.auth;

/**
 * Why a request carried no usable token. {@link #code()} is the metric tag
 * ({@code reason="expired"}) and the word a 401 body may show; neither ever includes the token.
 */
public enum DenialReason {
    /** No {@code Authorization: Bearer} header and no {@code access_token} parameter. */
    MISSING("missing", "no token"),
    /** Not a compact JWS, an unparseable header or claims set, two carriers, or a token too long. */
    MALFORMED("malformed", "malformed token"),
    /** No key of the set verifies the signature. */
    BAD_SIGNATURE("bad_signature", "bad signature"),
    /** {@code exp} (plus the leeway) is past. */
    EXPIRED("expired", "token expired"),
    /** {@code nbf} (minus the leeway) is still ahead. */
    NOT_YET_VALID("not_yet_valid", "token not yet valid"),
    WRONG_ISSUER("wrong_issuer", "wrong issuer"),
    WRONG_AUDIENCE("wrong_audience", "wrong audience"),
    /** The {@code kid} is in no loaded key, or no key is loaded at all. */
    UNKNOWN_KEY("unknown_key", "unknown key"),
    /** No {@code exp} while {@code auth.jwt.requireExp} is on. */
    NO_EXPIRY("no_expiry", "token without expiry"),
    /** {@code alg: none}, an unknown algorithm, or one that the chosen key is not for. */
    ALGORITHM_NOT_ALLOWED("algorithm_not_allowed", "algorithm not allowed"),
    /** No {@code sub}, or {@code sub}, {@code topics} or {@code publish} of the wrong shape. */
    BAD_CLAIMS("bad_claims", "bad claims");

    private final String code;
    private final String message;

    DenialReason(String code, String message) {
        this.code = code;
        this.message = message;
    }

    /** Lower-case tag for metrics and 401 bodies. */
    public String code() {
        return code;
    }

    /** A short human text for a 401 body; says nothing of the token itself. */
    public String message() {
        return message;
    }
}
