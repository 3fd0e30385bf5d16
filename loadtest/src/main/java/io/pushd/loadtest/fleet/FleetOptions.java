package io.pushd.loadtest.fleet;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** How many clients, on which topics and source addresses. A picocli mixin shared by the scenarios. */
public final class FleetOptions {

    /** Ephemeral ports usable per source address towards one server port (Linux default range). */
    static final int PORTS_PER_ADDRESS = 28_000;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--clients", paramLabel = "N", defaultValue = "1000",
            description = "Clients to connect.")
    int clients;

    @Option(names = "--topics", paramLabel = "N", defaultValue = "10",
            description = "Topics; client i follows topic i mod N.")
    int topics;

    @Option(names = "--source-addresses", paramLabel = "LIST|COUNT",
            description = "Loopback source addresses the clients bind, round robin: a list "
                    + "(127.0.0.1,127.0.0.2) or a count (4 = 127.0.0.1-127.0.0.4). Each gives ~28k ports. "
                    + "Default: the system's choice.")
    String sourceAddresses;

    @Option(names = "--client-threads", paramLabel = "N",
            description = "Event-loop threads shared by all clients (default: one per core).")
    Integer clientThreads;

    @Option(names = "--connect-rate", paramLabel = "PER_SECOND", defaultValue = "1000",
            description = "Initial connects per second, so the start is not itself a storm.")
    int connectRate;

    /** Validated settings. */
    public FleetSpec spec() {
        if (clients < 1 || clients > 1_000_000) {
            throw usage("--clients must be 1-1000000: " + clients);
        }
        if (topics < 1 || topics > 10_000) {
            throw usage("--topics must be 1-10000: " + topics);
        }
        if (connectRate < 1) {
            throw usage("--connect-rate must be >= 1: " + connectRate);
        }
        int threads = clientThreads != null ? clientThreads : Runtime.getRuntime().availableProcessors();
        if (threads < 1 || threads > 256) {
            throw usage("--client-threads must be 1-256: " + threads);
        }
        List<InetAddress> addresses = parseAddresses();
        int perAddress = Math.max(1, addresses.size());
        if (clients > PORTS_PER_ADDRESS * perAddress) {
            throw usage(clients + " clients need more than " + perAddress + " source address(es) of ~"
                    + PORTS_PER_ADDRESS + " ports each: pass --source-addresses "
                    + ((clients + PORTS_PER_ADDRESS - 1) / PORTS_PER_ADDRESS));
        }
        return new FleetSpec(clients, topics, addresses, threads, connectRate);
    }

    private List<InetAddress> parseAddresses() {
        List<InetAddress> out = new ArrayList<>();
        if (sourceAddresses == null || sourceAddresses.isBlank()) {
            return out;
        }
        String s = sourceAddresses.trim();
        try {
            if (s.chars().allMatch(Character::isDigit)) {
                int n = Integer.parseInt(s);
                if (n < 1 || n > 254) {
                    throw usage("--source-addresses count must be 1-254: " + n);
                }
                for (int i = 1; i <= n; i++) {
                    out.add(InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) i}));
                }
                return out;
            }
            for (String part : s.split(",")) {
                InetAddress a = InetAddress.getByName(part.trim());
                if (!a.isLoopbackAddress()) {
                    throw usage("--source-addresses must be loopback addresses, not " + part.trim());
                }
                out.add(a);
            }
        } catch (UnknownHostException | NumberFormatException e) {
            throw usage("--source-addresses: " + e.getMessage());
        }
        return out;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
