package io.pushd.server.auth;

/**
 * What {@link AccessControl} decided for one request: a {@link Grant}, or the HTTP answer of a
 * refusal (401 or 403, with the wire's error code and a message that never quotes the token).
 *
 * @param wwwAuthenticate the {@code WWW-Authenticate} value of a 401, else null
 * @param reason          the metric tag the refusal was counted under (null when allowed)
 */
public record AccessDecision(Grant grant, int status, String code, String message, String wwwAuthenticate,
                             String reason) {

    static AccessDecision allow(Grant g) {
        return new AccessDecision(g, 200, null, null, null, null);
    }

    public boolean allowed() {
        return grant != null;
    }
}
