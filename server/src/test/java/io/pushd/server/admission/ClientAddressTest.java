package io.pushd.server.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientAddressTest {

    private static final InetSocketAddress PROXY = new InetSocketAddress("10.0.0.5", 4000);
    private static final InetSocketAddress DIRECT = new InetSocketAddress("192.0.2.7", 4000);

    @Test
    void thePeerCountsWhenItIsNotATrustedProxy() {
        ClientAddress a = new ClientAddress(List.of("10.0.0.0/8"));
        assertThat(a.resolve(DIRECT, "203.0.113.9")).isEqualTo("192.0.2.7");
    }

    @Test
    void behindATrustedProxyTheRightMostUntrustedHopCounts() {
        ClientAddress a = new ClientAddress(List.of("10.0.0.0/8"));
        assertThat(a.resolve(PROXY, "198.51.100.1, 203.0.113.9")).isEqualTo("203.0.113.9");
        assertThat(a.resolve(PROXY, "198.51.100.1, 203.0.113.9, 10.1.2.3")).isEqualTo("203.0.113.9");
        assertThat(a.resolve(PROXY, "10.1.2.3")).isEqualTo("10.0.0.5");
        assertThat(a.resolve(PROXY, null)).isEqualTo("10.0.0.5");
    }

    @Test
    void withoutTrustedProxiesForwardedForIsIgnored() {
        assertThat(new ClientAddress(List.of()).resolve(PROXY, "203.0.113.9")).isEqualTo("10.0.0.5");
    }

    @Test
    void hostNamesAreNeverResolvedOnlyIpLiteralsAreParsed() {
        assertThat(ClientAddress.literal("dead.beef")).isNull();
        assertThat(ClientAddress.literal("cafe")).isNull();
        assertThat(ClientAddress.literal("localhost")).isNull();
        assertThat(ClientAddress.literal("10.0.0.1")).containsExactly(10, 0, 0, 1);
        assertThat(ClientAddress.literal("::1")).hasSize(16);
        // a name-looking hop behind a trusted proxy is just a label, not a lookup
        assertThat(new ClientAddress(List.of("10.0.0.0/8")).resolve(PROXY, "dead.beef")).isEqualTo("dead.beef");
    }

    @Test
    void ipv6BlocksAreMatched() {
        ClientAddress a = new ClientAddress(List.of("fd00::/8"));
        assertThat(a.resolve(new InetSocketAddress("fd00::1", 1), "2001:db8::5")).isEqualTo("2001:db8::5");
    }
}
