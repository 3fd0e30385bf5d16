package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.server.config.ConfigException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuthConfigTest {

    @Test
    void theDefaultsNeedNoTokenAndPublishOnlyFromLoopback() throws Exception {
        AuthConfig c = AuthConfig.defaults();
        assertThat(c.mode()).isEqualTo(AuthConfig.Mode.NONE);
        assertThat(c.jwt().leeway()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.jwt().requireExp()).isTrue();
        AddressBlocks allowed = c.publishAllowList();
        assertThat(allowed.contains(InetAddress.getByName("127.0.0.1"))).isTrue();
        assertThat(allowed.contains(InetAddress.getByName("127.9.8.7"))).isTrue();
        assertThat(allowed.contains(InetAddress.getByName("::1"))).isTrue();
        assertThat(allowed.contains(InetAddress.getByAddress(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff,
                (byte) 0xff, 127, 0, 0, 1}))).as("v4-mapped loopback").isTrue();
        assertThat(allowed.contains(InetAddress.getByName("10.0.0.1"))).isFalse();
        assertThat(allowed.contains(InetAddress.getByName("128.0.0.1"))).isFalse();
        assertThat(allowed.contains(InetAddress.getByName("::2"))).isFalse();
    }

    @Test
    void blocksOfAnyPrefixLengthMatch() throws Exception {
        AddressBlocks b = AddressBlocks.parse("k", List.of("10.1.0.0/17", "2001:db8::/32", "192.168.1.7"));
        assertThat(b.contains(InetAddress.getByName("10.1.127.255"))).isTrue();
        assertThat(b.contains(InetAddress.getByName("10.1.128.0"))).isFalse();
        assertThat(b.contains(InetAddress.getByName("2001:db8:ffff::1"))).isTrue();
        assertThat(b.contains(InetAddress.getByName("2001:db9::1"))).isFalse();
        assertThat(b.contains(InetAddress.getByName("192.168.1.7"))).isTrue();
        assertThat(b.contains(InetAddress.getByName("192.168.1.8"))).isFalse();
        assertThat(AddressBlocks.parse("k", List.of()).contains(InetAddress.getByName("127.0.0.1"))).isFalse();
    }

    @Test
    void badValuesNameTheKeyTheValueAndWhatWasExpected() {
        assertThatThrownBy(() -> AuthConfig.defaults().withPublishAllowedFrom(List.of("localhost")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("security.publishAllowedFrom: localhost (expected: IP addresses or CIDR blocks such as "
                        + "127.0.0.0/8 or ::1)");
        assertThatThrownBy(() -> AuthConfig.defaults().withPublishAllowedFrom(List.of("10.0.0.0/33")))
                .hasMessageStartingWith("security.publishAllowedFrom: 10.0.0.0/33 (expected");
        assertThatThrownBy(() -> AuthConfig.defaults().withMode(AuthConfig.Mode.JWT))
                .hasMessage("auth.jwt.jwksFile: null (expected: a JWK set file, or auth.jwt.jwksUrl, when auth.mode is jwt)");
        assertThatThrownBy(() -> AuthConfig.defaults().withMaxConnectionsPerSubject(0))
                .hasMessage("limits.maxConnectionsPerSubject: 0 (expected: >= 1)");
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withLeeway(Duration.ofMinutes(11)))
                .hasMessage("auth.jwt.leeway: 11m (expected: 0s-10m)");
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withJwksUrl("http://id.example/jwks"))
                .hasMessage("auth.jwt.jwksUrl: http://id.example/jwks (expected: an https:// URL (http:// only for localhost))");
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withJwksUrl("https://u:p@id.example/jwks"))
                .isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withIssuer(" ", null)).hasMessageStartingWith("auth.jwt.issuer");
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withIntervals(Duration.ofMillis(10), Duration.ofMinutes(1)))
                .hasMessage("auth.jwt.pollInterval: 10ms (expected: >= 100ms)");
    }

    @Test
    void aJwksUrlWithCredentialsIsRefusedWithoutQuotingThem() {
        // the message goes to stderr and the start-up log: the password must not
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withJwksUrl("https://svc:s3cr3t-pw@id.example/jwks"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("auth.jwt.jwksUrl: https://REDACTED@id.example/jwks (expected")
                .message().doesNotContain("s3cr3t-pw").doesNotContain("svc");
        // an API key in the query of a URL refused for another reason (clear-text http) is not quoted either
        assertThatThrownBy(() -> AuthConfig.Jwt.defaults().withJwksUrl("http://id.example/jwks?api_key=k3y-123#frag"))
                .hasMessageStartingWith("auth.jwt.jwksUrl: http://id.example/jwks?REDACTED (expected")
                .message().doesNotContain("k3y-123");
    }

    @Test
    void thePrintedConfigurationShowsTheJwksUrlWithoutItsQuery() {
        io.pushd.server.config.ServerConfig c = io.pushd.server.config.ConfigLoader.load(null, java.util.Map.of(
                "auth.mode", "jwt", "auth.jwt.jwksUrl", "https://id.example/jwks?api_key=k3y-123"));
        String yaml = io.pushd.server.config.ConfigLoader.toYaml(c);
        assertThat(yaml).contains("https://id.example/jwks?REDACTED").doesNotContain("k3y-123");
        assertThat(c.auth().jwt().jwksUrl()).contains("k3y-123"); // the fetch still uses it
    }

    @Test
    void modeJwtWithAKeySourceIsValid() {
        AuthConfig c = AuthConfig.defaults().withJwt(AuthConfig.Jwt.defaults().withJwksUrl("https://id.example/jwks"))
                .withMode(AuthConfig.Mode.JWT);
        assertThat(c.mode()).isEqualTo(AuthConfig.Mode.JWT);
        assertThat(AuthConfig.Jwt.defaults().withJwksUrl("http://localhost:8081/jwks").jwksUrl()).startsWith("http://");
    }

    @Test
    void theModeReadsAndWritesAsTheLowerCaseWordOfTheYamlFile() throws Exception {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertThat(json.readValue("\"jwt\"", AuthConfig.Mode.class)).isEqualTo(AuthConfig.Mode.JWT);
        assertThat(json.readValue("\"none\"", AuthConfig.Mode.class)).isEqualTo(AuthConfig.Mode.NONE);
        assertThat(json.writeValueAsString(AuthConfig.Mode.NONE)).isEqualTo("\"none\"");
        assertThatThrownBy(() -> json.readValue("\"JWT\"", AuthConfig.Mode.class))
                .isInstanceOf(com.fasterxml.jackson.databind.exc.InvalidFormatException.class);
    }
}
