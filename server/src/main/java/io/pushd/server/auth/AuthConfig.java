package io.pushd.server.auth;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.pushd.server.config.ConfigException;
import io.pushd.server.config.Durations;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * Who may subscribe and publish. With {@link Mode#NONE} (the embedded default, so the
 * one-command start keeps working) there are no tokens: anyone subscribes, and only addresses in
 * {@code security.publishAllowedFrom} (loopback by default) publish. With {@link Mode#JWT} a
 * signed token decides everything.
 *
 * <p>The record gathers keys from three sections of the YAML file ({@code auth.*},
 * {@code security.publishAllowedFrom}, {@code limits.maxConnectionsPerSubject}) so that the auth
 * code is configured by one value; errors name the YAML key.
 *
 * @param publishAllowedFrom       {@code security.publishAllowedFrom}: IP addresses or CIDR
 *                                 blocks allowed to publish in mode none (ignored in mode jwt)
 * @param maxConnectionsPerSubject {@code limits.maxConnectionsPerSubject}: WebSocket and SSE
 *                                 sessions per token {@code sub} (mode jwt only)
 */
public record AuthConfig(Mode mode, Jwt jwt, List<String> publishAllowedFrom, int maxConnectionsPerSubject) {

    public static final Mode DEFAULT_MODE = Mode.NONE;
    /** Loopback only: a server reachable from a network publishes only from its own host until configured. */
    public static final List<String> DEFAULT_PUBLISH_ALLOWED_FROM = List.of("127.0.0.0/8", "::1");
    /** The same as {@code limits.maxConnectionsPerIp}: a bound against one leaked token, not a quota. */
    public static final int DEFAULT_MAX_CONNECTIONS_PER_SUBJECT = 100_000;

    /** {@code auth.mode}. */
    public enum Mode {
        @JsonProperty("none") NONE,
        @JsonProperty("jwt") JWT
    }

    public AuthConfig {
        require(mode != null, "auth.mode", null, "none or jwt");
        require(jwt != null, "auth.jwt", null, "a mapping");
        require(publishAllowedFrom != null, "security.publishAllowedFrom", null, "a list");
        publishAllowedFrom = List.copyOf(publishAllowedFrom);
        try {
            AddressBlocks.parse("security.publishAllowedFrom", publishAllowedFrom);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        require(maxConnectionsPerSubject >= 1, "limits.maxConnectionsPerSubject", maxConnectionsPerSubject, ">= 1");
        if (mode == Mode.JWT) {
            require(jwt.jwksFile() != null || jwt.jwksUrl() != null, "auth.jwt.jwksFile", null,
                    "a JWK set file, or auth.jwt.jwksUrl, when auth.mode is jwt");
        }
    }

    public static AuthConfig defaults() {
        return new AuthConfig(DEFAULT_MODE, Jwt.defaults(), DEFAULT_PUBLISH_ALLOWED_FROM,
                DEFAULT_MAX_CONNECTIONS_PER_SUBJECT);
    }

    public AuthConfig withMode(Mode m) {
        return new AuthConfig(m, jwt, publishAllowedFrom, maxConnectionsPerSubject);
    }

    public AuthConfig withJwt(Jwt j) {
        return new AuthConfig(mode, j, publishAllowedFrom, maxConnectionsPerSubject);
    }

    public AuthConfig withPublishAllowedFrom(List<String> blocks) {
        return new AuthConfig(mode, jwt, blocks, maxConnectionsPerSubject);
    }

    public AuthConfig withMaxConnectionsPerSubject(int n) {
        return new AuthConfig(mode, jwt, publishAllowedFrom, n);
    }

    /** {@link #publishAllowedFrom()} parsed for matching peers. */
    public AddressBlocks publishAllowList() {
        return AddressBlocks.parse("security.publishAllowedFrom", publishAllowedFrom);
    }

    /**
     * {@code auth.jwt.*}: where the keys come from and what a token must say.
     *
     * @param jwksFile     a JWK set (RFC 7517) holding {@code oct} secrets and public keys; polled
     *                     every {@code pollInterval} and reloaded when it changes; null: none
     * @param jwksUrl      an https URL of a JWK set, fetched off the event loops every
     *                     {@code refreshInterval}; the last good set is kept on failure; null: none
     * @param issuer       required {@code iss} when set
     * @param audience     a value {@code aud} must contain when set
     * @param leeway       clock skew allowed on {@code exp} and {@code nbf}
     * @param requireExp   refuse tokens without {@code exp}
     */
    public record Jwt(String jwksFile,
                      @com.fasterxml.jackson.databind.annotation.JsonSerialize(using = RedactingUrl.class) String jwksUrl,
                      String issuer, String audience, Duration leeway,
                      boolean requireExp, Duration pollInterval, Duration refreshInterval) {
        public static final Duration DEFAULT_LEEWAY = Duration.ofSeconds(30);
        public static final boolean DEFAULT_REQUIRE_EXP = true;
        /** A stat() of one file: cheap enough to notice a rotated key within seconds. */
        public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(2);
        /** Identity providers rotate keys over days and publish the next one ahead; minutes are plenty. */
        public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(5);

        public Jwt {
            require(jwksFile == null || !jwksFile.isBlank(), "auth.jwt.jwksFile", jwksFile, "a file path");
            require(jwksUrl == null || validUrl(jwksUrl), "auth.jwt.jwksUrl", withoutCredentials(jwksUrl),
                    "an https:// URL (http:// only for localhost)");
            require(issuer == null || !issuer.isBlank(), "auth.jwt.issuer", issuer, "a non-empty string");
            require(audience == null || !audience.isBlank(), "auth.jwt.audience", audience, "a non-empty string");
            require(leeway != null && !leeway.isNegative() && leeway.compareTo(Duration.ofMinutes(10)) <= 0,
                    "auth.jwt.leeway", leeway, "0s-10m");
            require(pollInterval != null && pollInterval.toMillis() >= 100, "auth.jwt.pollInterval", pollInterval,
                    ">= 100ms");
            require(refreshInterval != null && refreshInterval.toSeconds() >= 1, "auth.jwt.refreshInterval",
                    refreshInterval, ">= 1s");
        }

        public static Jwt defaults() {
            return new Jwt(null, null, null, null, DEFAULT_LEEWAY, DEFAULT_REQUIRE_EXP, DEFAULT_POLL_INTERVAL,
                    DEFAULT_REFRESH_INTERVAL);
        }

        public Jwt withJwksFile(String f) {
            return new Jwt(f, jwksUrl, issuer, audience, leeway, requireExp, pollInterval, refreshInterval);
        }

        public Jwt withJwksUrl(String u) {
            return new Jwt(jwksFile, u, issuer, audience, leeway, requireExp, pollInterval, refreshInterval);
        }

        public Jwt withIssuer(String iss, String aud) {
            return new Jwt(jwksFile, jwksUrl, iss, aud, leeway, requireExp, pollInterval, refreshInterval);
        }

        public Jwt withLeeway(Duration d) {
            return new Jwt(jwksFile, jwksUrl, issuer, audience, d, requireExp, pollInterval, refreshInterval);
        }

        public Jwt withRequireExp(boolean r) {
            return new Jwt(jwksFile, jwksUrl, issuer, audience, leeway, r, pollInterval, refreshInterval);
        }

        public Jwt withIntervals(Duration poll, Duration refresh) {
            return new Jwt(jwksFile, jwksUrl, issuer, audience, leeway, requireExp, poll, refresh);
        }

        /**
         * The URL as a message may show it: a {@code user:password@} before the host becomes
         * {@code REDACTED@}, and a query (where API keys travel) and fragment {@code ?REDACTED}.
         */
        /**
         * The printed configuration ({@code --print-config}, the start-up log) shows the URL without
         * its query, as {@link KeySource}'s own log lines do: an identity provider's key URL may
         * carry an API key there.
         */
        static final class RedactingUrl extends com.fasterxml.jackson.databind.JsonSerializer<String> {
            @Override
            public void serialize(String value, com.fasterxml.jackson.core.JsonGenerator g,
                                  com.fasterxml.jackson.databind.SerializerProvider p) throws java.io.IOException {
                g.writeString(withoutCredentials(value));
            }
        }

        private static String withoutCredentials(String url) {
            return url == null ? null : url.replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@", "$1REDACTED@")
                    .replaceFirst("[?#].*$", "?REDACTED");
        }

        private static boolean validUrl(String s) {
            try {
                URI u = new URI(s);
                if (u.getHost() == null || u.getUserInfo() != null) {
                    return false; // credentials in a URL end up in logs
                }
                if ("https".equalsIgnoreCase(u.getScheme())) {
                    return true;
                }
                String h = u.getHost();
                // keys fetched in clear text could be swapped by anyone on the path: only for tests and sidecars
                return "http".equalsIgnoreCase(u.getScheme())
                        && (h.equals("localhost") || h.equals("127.0.0.1") || h.equals("[::1]"));
            } catch (java.net.URISyntaxException e) {
                return false;
            }
        }
    }

    static void require(boolean ok, String key, Object value, String expected) {
        if (!ok) {
            Object shown = value instanceof Duration d ? Durations.format(d) : value;
            throw new ConfigException(key + ": " + shown + " (expected: " + expected + ")");
        }
    }
}
