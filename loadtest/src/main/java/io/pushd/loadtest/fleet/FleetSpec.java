package io.pushd.loadtest.fleet;

import java.net.InetAddress;
import java.util.List;

/**
 * Validated fleet settings.
 *
 * @param sourceAddresses empty: let the system choose
 */
public record FleetSpec(int clients, int topics, List<InetAddress> sourceAddresses, int clientThreads,
                        int connectRate) {

    public FleetSpec {
        sourceAddresses = List.copyOf(sourceAddresses);
    }
}
