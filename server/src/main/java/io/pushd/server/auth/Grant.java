package io.pushd.server.auth;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What a verified token allows.
 *
 * @param subject   the {@code sub} claim: shown in logs and counted by
 *                  {@code limits.maxConnectionsPerSubject}
 * @param subscribe the {@code topics} claim (empty: may subscribe to nothing)
 * @param publish   the {@code publish} claim (empty: may publish nowhere)
 * @param expiresAt the instant the verifier stops accepting this token ({@code exp} plus the
 *                  leeway): a session still on this token then is closed with 4001; null when the
 *                  token has no {@code exp} and {@code auth.jwt.requireExp} is off
 */
public record Grant(String subject, List<TopicPattern> subscribe, List<TopicPattern> publish, Instant expiresAt)
        implements AuthResult {

    public Grant {
        Objects.requireNonNull(subject, "subject");
        subscribe = List.copyOf(subscribe);
        publish = List.copyOf(publish);
    }

    /** A grant for {@code auth.mode: none}: anyone subscribes everywhere; publishing is decided by address. */
    public static Grant anonymous(boolean mayPublish) {
        List<TopicPattern> any = List.of(TopicPattern.parse("*"));
        return new Grant("anonymous", any, mayPublish ? any : List.of(), null);
    }

    public boolean maySubscribe(String topic) {
        return anyMatches(subscribe, topic);
    }

    public boolean mayPublish(String topic) {
        return anyMatches(publish, topic);
    }

    /** Whether the token has run out at {@code now}; never for a grant without expiry. */
    public boolean isExpiredAt(Instant now) {
        return expiresAt != null && now.isAfter(expiresAt);
    }

    private static boolean anyMatches(List<TopicPattern> patterns, String topic) {
        for (TopicPattern p : patterns) {
            if (p.matches(topic)) {
                return true;
            }
        }
        return false;
    }
}
