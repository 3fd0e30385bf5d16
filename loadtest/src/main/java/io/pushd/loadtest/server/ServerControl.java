package io.pushd.loadtest.server;

import io.pushd.loadtest.Deadline;
import java.net.URI;

/**
 * The server under test, whether the load test started it ({@link ManagedServer}) or it runs
 * elsewhere on this host ({@link ExternalServer}). Scenarios only see this interface.
 */
public interface ServerControl extends AutoCloseable {

    /** Loopback host the clients and the publisher connect to. */
    String host();

    int port();

    /** {@code http://host:port}, without a trailing slash. */
    default URI httpBase() {
        return URI.create("http://" + host() + ":" + port());
    }

    /** Takes the server down in {@code mode}, brings it back and waits until it is ready. */
    RestartTiming restart(RestartMode mode, Deadline deadline) throws InterruptedException;

    /** One line for the report, e.g. the jar and pid. */
    String describe();

    /** Stops a server this run started; leaves an external one alone. Never throws. */
    @Override
    void close();
}
