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

    /** The source addresses as the report shows them: "system's choice" or the list of addresses. */
    public Object sourceAddressesSetting() {
        return sourceAddresses.isEmpty() ? "system's choice"
                : sourceAddresses.stream().map(InetAddress::getHostAddress).toList();
    }
}
