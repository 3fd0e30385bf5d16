package io.pushd.server.auth;

/** What {@link TokenVerifier#verify} answers: a {@link Grant} or a {@link Denial}. */
public sealed interface AuthResult permits Grant, Denial {
}
