package io.pushd.loadtest.fleet;

import io.pushd.client.ClientResources;
import io.pushd.client.PushClient;
import io.pushd.client.PushClientOptions;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.report.Report;
import java.io.PrintStream;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.HdrHistogram.Recorder;

/**
 * Many {@link PushClient}s on a few shared event loops ({@link ClientResources}), each following
 * one topic live-only (so it starts at the head at subscribe time) with the library's default
 * reconnect behaviour: the point is to test what real clients do.
 */
public final class ClientFleet implements AutoCloseable {

    private final ClientResources resources;
    private final List<ClientRecord> records;
    private final Recorder steadyLatencyMicros = new Recorder(3);
    private final Recorder disturbedLatencyMicros = new Recorder(3);

    private ClientFleet(ClientResources resources, List<ClientRecord> records) {
        this.resources = resources;
        this.records = Collections.unmodifiableList(records);
    }

    /**
     * Creates and starts the clients at {@code spec.connectRate()} per second (returns once all are
     * started, not connected; see {@link #await}).
     */
    public static ClientFleet start(FleetSpec spec, String host, int port, List<String> topics, Deadline deadline)
            throws InterruptedException {
        return start(spec, host, port, topics, deadline, UnaryOperator.identity());
    }

    /**
     * As {@link #start(FleetSpec, String, int, List, Deadline)}, with {@code customize} applied to
     * each client's options builder (after topic and source address), e.g. to replace the backoff.
     */
    public static ClientFleet start(FleetSpec spec, String host, int port, List<String> topics, Deadline deadline,
                                    UnaryOperator<PushClientOptions.Builder> customize) throws InterruptedException {
        return start(spec, host, port, topics, deadline, (i, b) -> customize.apply(b));
    }

    /** Per-client options (e.g. client {@code index}'s own token), applied after topic and source address. */
    @FunctionalInterface
    public interface Customizer {

        PushClientOptions.Builder apply(int index, PushClientOptions.Builder builder);

        /** This, then {@code next}. */
        default Customizer andThen(UnaryOperator<PushClientOptions.Builder> next) {
            return (i, b) -> next.apply(apply(i, b));
        }
    }

    /** As {@link #start(FleetSpec, String, int, List, Deadline, UnaryOperator)}, per client. */
    public static ClientFleet start(FleetSpec spec, String host, int port, List<String> topics, Deadline deadline,
                                    Customizer customize) throws InterruptedException {
        if (topics.size() != spec.topics()) {
            throw new IllegalArgumentException("topics: " + topics.size() + " names for " + spec.topics());
        }
        ClientResources resources = ClientResources.create(spec.clientThreads());
        List<ClientRecord> records = new ArrayList<>(spec.clients());
        ClientFleet fleet = new ClientFleet(resources, records);
        try {
            PushClientOptions template = PushClientOptions.builder(host, port).topic(topics.get(0)).build();
            List<InetAddress> addresses = spec.sourceAddresses();
            long startNanos = System.nanoTime();
            for (int i = 0; i < spec.clients(); i++) {
                // Pace the initial connects: the initial connect is not what is measured.
                long due = startNanos + (long) (i * 1e9 / spec.connectRate());
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                deadline.check("connecting the clients");
                String topic = topics.get(i % topics.size());
                PushClientOptions.Builder b = PushClientOptions.builder(template.host(), template.port()).topic(topic);
                if (!addresses.isEmpty()) {
                    b.localAddress(addresses.get(i % addresses.size()));
                }
                ClientRecord record = new ClientRecord(i, topic, fleet.steadyLatencyMicros, fleet.disturbedLatencyMicros);
                records.add(record);
                record.client = resources.newClient(customize.apply(i, b).build(), record).start();
            }
        } catch (InterruptedException | RuntimeException e) {
            fleet.close();
            throw e;
        }
        return fleet;
    }

    public List<ClientRecord> records() {
        return records;
    }

    public int size() {
        return records.size();
    }

    /** {@code epoll} or {@code nio}. */
    public String transport() {
        return resources.transport();
    }

    /**
     * End-to-end delivery latency (publish request sent → event delivered), in microseconds, of the
     * events published in steady state or during a restart (the {@code "steady"} flag of the event).
     */
    public Recorder deliveryLatencyMicros(boolean steady) {
        return steady ? steadyLatencyMicros : disturbedLatencyMicros;
    }

    /** The initial connect: the clients without a {@code subscribed} yet, and the seconds since the start. */
    public record Connected(List<ClientRecord> notConnected, double seconds) {

        public boolean all() {
            return notConnected.isEmpty();
        }
    }

    /**
     * Waits (at most {@code timeout}) until every client got its first {@code subscribed}; adds the
     * check {@code checkName} ("n/N within s") and prints "connected n/N {@code noun} on T
     * {@code topicsWord} in s".
     *
     * @param startNanos when connecting started, for the seconds reported
     * @param topics     the number of topics, for the printed line
     */
    public Connected awaitConnected(long startNanos, Duration timeout, Deadline deadline, int topics, Report report,
                                    PrintStream out, String checkName, String noun, String topicsWord)
            throws InterruptedException {
        // A client the server refused (401/403) will not get in with the same token: no point waiting for it.
        await(c -> c.subscribed() || c.refusedSince(startNanos), timeout, deadline);
        List<ClientRecord> notConnected = new ArrayList<>(records.stream().filter(c -> !c.subscribed()).toList());
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        int connected = size() - notConnected.size();
        // the count and the refusals first: they say why, when the overall timeout ends the run here
        report.check(checkName, notConnected.isEmpty(),
                String.format(Locale.ROOT, "%d/%d within %.1f s", connected, size(), seconds)
                        + ClientRecord.refusals(notConnected, startNanos));
        deadline.check("connecting the " + noun);
        out.printf(Locale.ROOT, "connected %d/%d %s on %d %s in %.1f s%n", connected, size(), noun, topics,
                topicsWord, seconds);
        return new Connected(notConnected, seconds);
    }

    /**
     * Polls until every client satisfies {@code done}, at most {@code timeout} (and the deadline).
     *
     * @return the clients still not done (empty: all done)
     */
    public List<ClientRecord> await(Predicate<ClientRecord> done, Duration timeout, Deadline deadline)
            throws InterruptedException {
        long end = System.nanoTime() + deadline.cap(timeout).toNanos();
        List<ClientRecord> pending = new ArrayList<>(records);
        while (true) {
            pending.removeIf(done);
            if (pending.isEmpty() || System.nanoTime() - end >= 0) {
                return pending;
            }
            Thread.sleep(50);
        }
    }

    /** Closes every client and stops the event loops (bounded, ~5 s). */
    @Override
    public void close() {
        resources.close();
    }
}
