package io.pushd.server.config;

import io.pushd.server.auth.AuthConfig;
import java.util.Objects;

/**
 * The {@code auth} section: {@code auth.mode} and {@code auth.jwt.*}. The auth code itself is
 * configured by {@link ServerConfig#authConfig()}, which adds the keys that live in other sections
 * ({@code security.publishAllowedFrom}, {@code limits.maxConnectionsPerSubject}).
 */
public record AuthSettings(AuthConfig.Mode mode, AuthConfig.Jwt jwt) {

    public AuthSettings {
        if (mode == null) {
            throw new ConfigException("auth.mode: null (expected: none or jwt)");
        }
        Objects.requireNonNull(jwt, "auth.jwt");
    }

    public static AuthSettings defaults() {
        return new AuthSettings(AuthConfig.DEFAULT_MODE, AuthConfig.Jwt.defaults());
    }

    /** Mode jwt with the keys of one JWK set file, the rest at the defaults. */
    public static AuthSettings jwtFromFile(String jwksFile) {
        return new AuthSettings(AuthConfig.Mode.JWT, AuthConfig.Jwt.defaults().withJwksFile(jwksFile));
    }

    public AuthSettings withJwt(AuthConfig.Jwt j) {
        return new AuthSettings(mode, j);
    }
}
