package io.pushd.server.admission;

import io.netty.handler.ipfilter.IpFilterRuleType;
import io.netty.handler.ipfilter.IpSubnetFilterRule;
import io.netty.util.NetUtil;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Which address a connection counts against. The socket peer, unless the peer is a trusted
 * proxy: then the right-most {@code X-Forwarded-For} hop that is not itself a trusted proxy
 * (everything left of that could have been written by the client).
 */
public final class ClientAddress {

    private final List<IpSubnetFilterRule> trusted;

    /** @param trustedProxies addresses or CIDR blocks, e.g. {@code 10.0.0.5}, {@code 10.0.0.0/8} */
    public ClientAddress(List<String> trustedProxies) {
        this.trusted = trustedProxies.stream().map(ClientAddress::parseCidr).toList();
    }

    /**
     * {@link #resolve(SocketAddress, String)} over every {@code X-Forwarded-For} line of a request,
     * in order. A proxy may add its own line below the client's (HAProxy's {@code option forwardfor}
     * does) rather than append to it; RFC 9110 section 5.3 makes the lines one list, so reading only
     * the first would trust the hop the client wrote.
     */
    public String resolveAll(SocketAddress peer, List<String> forwardedFor) {
        return resolve(peer, forwardedFor.isEmpty() ? null : String.join(",", forwardedFor));
    }

    public String resolve(SocketAddress peer, String forwardedFor) {
        boolean ip = peer instanceof InetSocketAddress isa && isa.getAddress() != null;
        String peerIp = ip ? ((InetSocketAddress) peer).getAddress().getHostAddress() : String.valueOf(peer);
        if (forwardedFor == null || trusted.isEmpty() || !ip || !matches((InetSocketAddress) peer)) {
            return peerIp;
        }
        String[] hops = forwardedFor.split(",");
        for (int i = hops.length - 1; i >= 0; i--) {
            String hop = hops[i].trim();
            if (hop.isEmpty()) {
                continue;
            }
            if (!isTrusted(hop)) {
                return hop;
            }
        }
        return peerIp;
    }

    /** Whether {@code peer} is one of {@code security.trustedProxies}. */
    public boolean isTrustedProxy(InetAddress peer) {
        return !trusted.isEmpty() && matches(new InetSocketAddress(peer, 0));
    }

    private boolean isTrusted(String ip) {
        byte[] addr = literal(ip);
        return addr != null && matches(new InetSocketAddress(inet(addr), 0));
    }

    private boolean matches(InetSocketAddress addr) {
        for (IpSubnetFilterRule rule : trusted) {
            if (rule.matches(addr)) {
                return true;
            }
        }
        return false;
    }

    private static IpSubnetFilterRule parseCidr(String spec) {
        int slash = spec.indexOf('/');
        byte[] addr = literal(slash < 0 ? spec.trim() : spec.substring(0, slash).trim());
        if (addr == null) {
            throw new IllegalArgumentException("security.trustedProxies: " + spec
                    + " (expected: an IP address or CIDR block)");
        }
        int bits = slash < 0 ? addr.length * 8 : Integer.parseInt(spec.substring(slash + 1).trim());
        if (bits < 0 || bits > addr.length * 8) {
            throw new IllegalArgumentException("security.trustedProxies: " + spec + " (prefix out of range)");
        }
        // The InetAddress constructor: the String one would resolve a name.
        return new IpSubnetFilterRule(inet(addr), bits, IpFilterRuleType.ACCEPT);
    }

    /** Parses an IP literal without DNS; null for anything else. */
    static byte[] literal(String ip) {
        // Netty's parser never resolves names: this runs on an event loop, so no DNS, ever.
        return NetUtil.createByteArrayFromIpAddressString(ip);
    }

    /**
     * 16 bytes stay IPv6: {@code InetAddress.getByAddress} would turn {@code ::ffff:a.b.c.d} into
     * IPv4, and such a hop never matched an IPv4 block (nor an IPv4 peer an IPv6 one).
     */
    private static InetAddress inet(byte[] addr) {
        try {
            return addr.length == 16 ? Inet6Address.getByAddress(null, addr, -1) : InetAddress.getByAddress(addr);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e); // only for a length other than 4 or 16
        }
    }
}
