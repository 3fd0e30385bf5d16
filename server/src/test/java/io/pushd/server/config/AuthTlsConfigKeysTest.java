package io.pushd.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.server.auth.AuthConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys of issue 12: auth.*, tls.*, server.adminPort, security.publishAllowedFrom, limits.maxConnectionsPerSubject. */
class AuthTlsConfigKeysTest {

    @TempDir
    Path dir;

    @Test
    void theDefaultsAreModeNoneLoopbackPublishersNoTlsNoAdminPort() {
        ServerConfig c = ConfigLoader.load(null, Map.of());
        assertThat(c.auth().mode()).isEqualTo(AuthConfig.Mode.NONE);
        assertThat(c.security().publishAllowedFrom()).containsExactly("127.0.0.0/8", "::1");
        assertThat(c.limits().maxConnectionsPerSubject()).isEqualTo(100_000);
        assertThat(c.tls().enabled()).isFalse();
        assertThat(c.tls().protocols()).containsExactly("TLSv1.3", "TLSv1.2");
        assertThat(c.server().adminPort()).isNull();
        assertThat(c.auth().jwt().leeway()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void threeLevelEnvironmentVariablesReachTheJwtSubSection() {
        Map<String, String> o = ConfigLoader.fromEnvironment(Map.of(
                "PUSH_AUTH_JWT_JWKS_FILE", "/etc/push/jwks.json",
                "PUSH_AUTH_MODE", "jwt",
                "PUSH_AUTH_JWT_LEEWAY", "5s",
                "PUSH_TLS_CERT_FILE", "/c.pem",
                "PUSH_SERVER_ADMIN_PORT", "9090",
                "PUSH_SECURITY_PUBLISH_ALLOWED_FROM", "10.0.0.0/8,::1",
                "PUSH_LIMITS_MAX_CONNECTIONS_PER_SUBJECT", "10"));
        assertThat(o).containsEntry("auth.jwt.jwksFile", "/etc/push/jwks.json").containsEntry("auth.mode", "jwt")
                .containsEntry("auth.jwt.leeway", "5s").containsEntry("tls.certFile", "/c.pem")
                .containsEntry("server.adminPort", "9090")
                .containsEntry("security.publishAllowedFrom", "10.0.0.0/8,::1")
                .containsEntry("limits.maxConnectionsPerSubject", "10");
    }

    @Test
    void overridesSetKeysWhoseDefaultIsUnset() {
        ServerConfig c = ConfigLoader.load(null, Map.of("auth.mode", "jwt", "auth.jwt.jwksFile", "/k.json",
                "auth.jwt.issuer", "https://idp.example", "server.adminPort", "9090",
                "tls.certFile", "/c.pem", "tls.keyFile", "/k.pem",
                "security.publishAllowedFrom", "10.0.0.0/8"));
        assertThat(c.auth().mode()).isEqualTo(AuthConfig.Mode.JWT);
        assertThat(c.auth().jwt().jwksFile()).isEqualTo("/k.json");
        assertThat(c.auth().jwt().issuer()).isEqualTo("https://idp.example");
        assertThat(c.server().adminPort()).isEqualTo(9090);
        assertThat(c.tls().certFile()).isEqualTo("/c.pem");
        assertThat(c.security().publishAllowedFrom()).containsExactly("10.0.0.0/8");
        assertThat(ConfigLoader.load(null, Map.of())).isEqualTo(ServerConfig.defaults());
        // and the effective YAML (with its unset keys) loads back to the same
        assertThat(loadYaml(ConfigLoader.toYaml(c))).isEqualTo(c);
    }

    @Test
    void modeJwtWithoutKeysAndBadValuesAreConfigErrorsNamingTheKey() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("auth.mode", "jwt")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("auth.jwt.jwksFile");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("auth.mode", "basic")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("auth.mode");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("tls.certFile", "/c.pem")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("tls.");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("security.publishAllowedFrom", "example.com")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("security.publishAllowedFrom");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.adminPort", "8080")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.adminPort");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.adminPort", "x")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.adminPort");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("limits.maxConnectionsPerSubject", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("limits.maxConnectionsPerSubject");
    }

    private ServerConfig loadYaml(String yaml) {
        try {
            Path f = dir.resolve("c.yaml");
            Files.writeString(f, yaml);
            return ConfigLoader.load(f, Map.of());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
