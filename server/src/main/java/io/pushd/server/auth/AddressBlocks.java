package io.pushd.server.auth;

import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A list of IP addresses and CIDR blocks ({@code 127.0.0.0/8}, {@code ::1}, {@code 10.0.0.0/8}),
 * parsed once, matched without DNS (it runs on event loops).
 */
public final class AddressBlocks {

    private record Block(byte[] network, int bits) {
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

    private final List<Block> blocks;

    private AddressBlocks(List<Block> blocks) {
        this.blocks = blocks;
    }

    /**
     * @param key the configuration key, for the message of a bad entry
     * @throws IllegalArgumentException {@code key: value (expected: …)} for an entry that is no
     *                                  address or block
     */
    public static AddressBlocks parse(String key, List<String> specs) {
        List<Block> out = new ArrayList<>(specs.size());
        for (String spec : specs) {
            out.add(block(key, spec));
        }
        return new AddressBlocks(List.copyOf(out));
    }

    private static Block block(String key, String spec) {
        IllegalArgumentException bad = new IllegalArgumentException(key + ": " + spec
                + " (expected: IP addresses or CIDR blocks such as 127.0.0.0/8 or ::1)");
        if (spec == null) {
            throw bad;
        }
        String s = spec.strip();
        int slash = s.indexOf('/');
        byte[] addr = NetUtil.createByteArrayFromIpAddressString(slash < 0 ? s : s.substring(0, slash));
        if (addr == null) {
            throw bad;
        }
        int bits = addr.length * 8;
        if (slash >= 0) {
            String b = s.substring(slash + 1);
            if (!b.matches("\\d{1,3}")) {
                throw bad;
            }
            bits = Integer.parseInt(b);
            if (bits > addr.length * 8) {
                throw bad;
            }
        }
        return new Block(addr, bits);
    }

    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        if (a.length == 16 && isV4Mapped(a)) {
            // a dual-stack socket may report ::ffff:127.0.0.1; it is the IPv4 peer
            a = new byte[] {a[12], a[13], a[14], a[15]};
        }
        for (Block b : blocks) {
            if (b.contains(a)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isV4Mapped(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xFF && a[11] == (byte) 0xFF;
    }

    public boolean isEmpty() {
        return blocks.isEmpty();
    }
}
