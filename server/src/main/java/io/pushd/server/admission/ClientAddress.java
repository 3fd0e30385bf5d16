package io.pushd.server.admission;

import io.netty.util.NetUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

/**
 * Which address a connection counts against. The socket peer, unless the peer is a trusted
 * proxy: then the right-most {@code X-Forwarded-For} hop that is not itself a trusted proxy
 * (everything left of that could have been written by the client).
 */
public final class ClientAddress {

    private final List<Cidr> trusted;

    private record Cidr(byte[] network, int bits) {
        boolean contains(byte[] addr) {
            if (addr.length != network.length) {
                return false;
            }
            int full = bits / 8;
            for (int i = 0; i < full; i++) {
                if (addr[i] != network[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (8 - rest)) & 0xFF;
            return (addr[full] & mask) == (network[full] & mask);
        }
    }

    /** @param trustedProxies addresses or CIDR blocks, e.g. {@code 10.0.0.5}, {@code 10.0.0.0/8} */
    public ClientAddress(List<String> trustedProxies) {
        this.trusted = trustedProxies.stream().map(ClientAddress::parseCidr).toList();
    }

    public String resolve(SocketAddress peer, String forwardedFor) {
        String peerIp = peer instanceof InetSocketAddress isa && isa.getAddress() != null
                ? isa.getAddress().getHostAddress() : String.valueOf(peer);
        if (forwardedFor == null || trusted.isEmpty() || !isTrusted(peerIp)) {
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
    public boolean isTrustedProxy(java.net.InetAddress peer) {
        return !trusted.isEmpty() && contains(peer.getAddress());
    }

    private boolean isTrusted(String ip) {
        byte[] addr = literal(ip);
        return addr != null && contains(addr);
    }

    private boolean contains(byte[] addr) {
        for (Cidr c : trusted) {
            if (c.contains(addr)) {
                return true;
            }
        }
        return false;
    }

    private static Cidr parseCidr(String spec) {
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
        return new Cidr(addr, bits);
    }

    /** Parses an IP literal without DNS; null for anything else. */
    static byte[] literal(String ip) {
        // Netty's parser never resolves names: this runs on an event loop, so no DNS, ever.
        return NetUtil.createByteArrayFromIpAddressString(ip);
    }
}
