package io.pushd.loadtest.auth;

/** Whether the clients and the publisher carry signed tokens, and signed how. */
public enum TokenMode {
    /** No tokens; the server runs with {@code auth.mode: none}. */
    none,
    /** HS256 with a 256-bit secret (an {@code oct} key in the JWK set). */
    hs256,
    /** RS256 with a 2048-bit RSA key pair (the public half in the JWK set). */
    rs256
}
