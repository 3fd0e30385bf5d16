package io.pushd.loadtest.fanout;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.OptionDefaults;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.fleet.ClientFleet;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.fleet.FleetOptions;
import io.pushd.loadtest.fleet.FleetSpec;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.publish.TopicsApi;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.ProcessCpu;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.protocol.EventId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code fanout}: N live subscribers on T topics, a paced publisher, and what it costs: client-side
 * deliveries per second, publish-to-deliver latency (HdrHistogram, corrected for coordinated
 * omission) and the server's CPU. Passes when every subscriber got every event exactly once.
 */
@Command(name = "fanout", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        defaultValueProvider = FanoutCommand.Defaults.class,
        description = {
                "Connects N subscribers (live only) on T topics, publishes at a fixed rate for a warm-up and then "
                        + "for the measured duration, and reports deliveries/s (client side), publish-to-deliver "
                        + "latency percentiles (HdrHistogram, coordinated-omission corrected) and the server's "
                        + "CPU (%% of one core, from /proc/<pid>/stat).",
                "Exit code: 0 every subscriber got every event exactly once, 1 otherwise, 2 usage error."
        })
public final class FanoutCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(FanoutCommand.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration PUBLISH_RETRY_TIMEOUT = Duration.ofSeconds(20);
    private static final int MAX_IN_FLIGHT = 20_000;

    @Spec
    CommandSpec spec;

    @Option(names = "--subscribers", paramLabel = "N", defaultValue = "1000",
            description = "Subscribers (WebSocket clients, one topic each; --clients is the same setting).")
    int subscribers;

    @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "100",
            description = "Events published per second over all topics.")
    double rate;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "5s", converter = DurationConverter.class,
            description = "Publishing before the measurement (not measured).")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s", converter = DurationConverter.class,
            description = "Measured publishing time.")
    Duration duration;

    @Option(names = "--catch-up-timeout", paramLabel = "DURATION", defaultValue = "60s",
            converter = DurationConverter.class,
            description = "How long after publishing stopped every subscriber must hold the head.")
    Duration catchUpTimeout;

    @Mixin
    FleetOptions fleet;

    @Mixin
    ServerOptions server;

    @Mixin
    RunOptions run;

    /** One topic unless told otherwise (the mixin's own default is 10). */
    public static final class Defaults extends OptionDefaults {
        public Defaults() {
            super(Map.of("--topics", "1", "--connect-rate", "2000"));
        }
    }

    @Override
    public Integer call() throws Exception {
        var parsed = spec.commandLine().getParseResult();
        if (parsed.hasMatchedOption("--clients")) {
            if (parsed.hasMatchedOption("--subscribers")) {
                throw usage("--subscribers and --clients are the same setting; give one");
            }
            subscribers = spec.findOption("--clients").getValue();
        }
        spec.findOption("--clients").setValue(subscribers);
        FleetSpec f = fleet.spec();
        Commands.checkRate(spec, rate);
        server.validate(false);
        return new Run(f, Commands.commandLine(spec), System.out).run() ? 0 : 1;
    }

    private ParameterException usage(String message) {
        return Commands.usage(spec, message);
    }

    /** One run: start, connect, warm up, measure, catch up, audit, report. */
    private final class Run {

        private final FleetSpec f;
        private final PrintStream out;
        private final Report report;
        private final String runId = ReportedRun.newRunId();

        Run(FleetSpec f, String commandLine, PrintStream out) {
            this.f = f;
            this.out = out;
            this.report = new Report("fanout", String.format(Locale.ROOT, "Fan-out: %,d subscribers on %d topic(s), "
                    + "%s events/s", f.clients(), f.topics(), fmt(rate)), commandLine);
        }

        boolean run() throws Exception {
            Deadline deadline = Deadline.in(run.timeout());
            ReportedRun.commonSettings(report.setting("subscribers", f.clients())
                    .setting("topics", f.topics())
                    .setting("ratePerSecond", rate)
                    .setting("warmupMs", warmup.toMillis())
                    .setting("durationMs", duration.toMillis())
                    .setting("clientThreads", f.clientThreads())
                    .setting("sourceAddresses", f.sourceAddressesSetting()), run, runId);
            return ReportedRun.run(report, run, deadline, out, log, this::execute);
        }

        private void execute(Deadline deadline) throws Exception {
            List<String> topics = TopicsApi.topicNames("fo-" + runId, f.topics());
            try (ServerControl srv = server.open(run.reportDir(), deadline, false)) {
                report.setting("server", srv.describe());
                out.println("server: " + srv.describe());
                OptionalLong serverPid = ProcessCpu.childServerPid(srv);
                long c0 = System.nanoTime();
                try (ClientFleet clients = ClientFleet.start(f, srv.host(), srv.port(), topics, deadline);
                     TopicsApi api = Publisher.api(srv.host(), srv.port());
                     Publisher publisher = new Publisher(api, topics, rate, "fo-" + runId,
                             PUBLISH_RETRY_TIMEOUT, MAX_IN_FLIGHT)) {
                    report.setting("clientTransport", clients.transport());
                    ClientFleet.Connected connected = clients.awaitConnected(c0, CONNECT_TIMEOUT, deadline, f.topics(),
                            report, out, "all subscribers connected", "subscribers", "topic(s)");
                    if (!connected.all()) {
                        return;
                    }
                    long connectsBefore = connects(clients);
                    Window w = measure(clients, publisher, serverPid, deadline);
                    boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                    deadline.check("waiting for the last publishes");
                    Map<String, EventId> heads = api.heads(topics, 30, Duration.ofMillis(500), deadline);
                    long k0 = System.nanoTime();
                    List<ClientRecord> behind = clients.await(c -> FleetAudit.caughtUp(c, heads.get(c.topic())),
                            catchUpTimeout, deadline);
                    deadline.check("waiting for the subscribers to catch up");
                    double catchUpS = (System.nanoTime() - k0) / 1e9;
                    check(clients, publisher, heads, behind, catchUpS, connectsBefore, settled);
                    figures(clients, w, serverPid, connected.seconds(), catchUpS);
                    publisher.problems().forEach(p -> report.note("publisher: " + p));
                }
            }
        }

        /** Warm-up (its events carry "steady":false and land in the other recorder), then the measured window. */
        private Window measure(ClientFleet clients, Publisher publisher, OptionalLong serverPid, Deadline deadline)
                throws InterruptedException {
            publisher.disturbed(true);
            publisher.start();
            deadline.sleep(warmup);
            clients.deliveryLatencyMicros(true).reset();
            publisher.disturbed(false);
            OptionalLong own = OptionalLong.of(ProcessHandle.current().pid());
            long d0 = deliveries(clients);
            Optional<ProcessCpu.Sample> cpu0 = ProcessCpu.Sample.of(serverPid);
            Optional<ProcessCpu.Sample> own0 = ProcessCpu.Sample.of(own);
            long issued0 = publisher.issued();
            long t0 = System.nanoTime();
            out.printf(Locale.ROOT, "warm-up done; measuring for %.1f s%n", duration.toMillis() / 1000.0);
            deadline.sleep(duration);
            long t1 = System.nanoTime();
            long d1 = deliveries(clients);
            Optional<ProcessCpu.Sample> cpu1 = ProcessCpu.Sample.of(serverPid);
            Optional<ProcessCpu.Sample> own1 = ProcessCpu.Sample.of(own);
            long issued1 = publisher.issued();
            publisher.stop();
            return new Window((t1 - t0) / 1e9, d1 - d0, issued1 - issued0,
                    ProcessCpu.Sample.percentOfOneCore(cpu0, cpu1), ProcessCpu.Sample.percentOfOneCore(own0, own1));
        }

        private void check(ClientFleet clients, Publisher publisher, Map<String, EventId> heads,
                           List<ClientRecord> behind, double catchUpS, long connectsBefore, boolean settled) {
            publisher.stats().report(report);
            report.check("every subscriber caught up", behind.isEmpty(), behind.isEmpty()
                    ? String.format(Locale.ROOT, "all at the head %.1f s after the last publish was answered", catchUpS)
                    : behind.size() + " behind after " + catchUpTimeout.toSeconds() + " s, e.g. client "
                    + behind.get(0).index() + " at seq " + behind.get(0).lastSeq() + ", head "
                    + heads.get(behind.get(0).topic()));
            FleetAudit.verify(clients.records(), heads, report);
            long connectsAfter = connects(clients);
            report.check("no reconnects during the run", connectsAfter == connectsBefore,
                    (connectsAfter - connectsBefore) + " reconnects");
        }

        private void figures(ClientFleet clients, Window w, OptionalLong serverPid, double connectS, double catchUpS) {
            // Each subscriber expects one event every topics/rate seconds: that is the interval
            // a stalled delivery would have hidden samples at (HdrHistogram's CO correction).
            long expectedIntervalMicros = Math.max(1, Math.round(1e6 * f.topics() / rate));
            Histogram raw = clients.deliveryLatencyMicros(true).getIntervalHistogram();
            LatencySummary latency = LatencySummary.of("publish → deliver, CO-corrected (interval "
                    + expectedIntervalMicros / 1000.0 + " ms)", coCorrected(raw, expectedIntervalMicros), 1000);
            LatencySummary latencyRaw = LatencySummary.of("publish → deliver, as measured", raw, 1000);
            report.latency(latency).latency(latencyRaw);
            double expectedPerS = rate * f.clients() / f.topics();
            ObjectNode json = report.data().putObject("fanout");
            report.figures("Fan-out figures (measured window)", List.of("what", "value"), out)
                    .row(json, Figure.label("published events/s"),
                            Figure.shown("publishedPerSecond", w.published() / w.seconds(),
                                    Figure.round1(w.published() / w.seconds())), Figure.json("windowSeconds", w.seconds()))
                    .row(json, Figure.label("deliveries/s (client side)"),
                            Figure.shown("deliveriesPerSecond", w.deliveries() / w.seconds(),
                                    Figure.round1(w.deliveries() / w.seconds())),
                            Figure.json("deliveriesInWindow", w.deliveries()))
                    .row(json, Figure.label("expected deliveries/s (rate × subscribers / topics)"),
                            Figure.shown("expectedDeliveriesPerSecond", expectedPerS, Figure.round1(expectedPerS)))
                    .row(json, Figure.label("server CPU, % of one core"),
                            Figure.shown("serverCpuPercentOfOneCore", w.serverCpu(), cpuText(w.serverCpu())),
                            Figure.json("serverPid", serverPid.isPresent() ? serverPid.getAsLong() : -1))
                    .row(json, Figure.label("load generator CPU (this JVM), % of one core"),
                            Figure.shown("loadGeneratorCpuPercentOfOneCore", w.ownCpu(), cpuText(w.ownCpu())))
                    .row(json.putObject("latencyMs"), Figure.label("latency p50 / p90 / p99 / p99.9 / max ms (CO-corrected)"),
                            Figure.json("count", latency.count()), Figure.fmt("p50", latency.p50Ms(), "%.2f"),
                            Figure.fmt("p90", latency.p90Ms(), "%.2f"), Figure.fmt("p99", latency.p99Ms(), "%.2f"),
                            Figure.fmt("p999", latency.p999Ms(), "%.2f"), Figure.fmt("max", latency.maxMs(), "%.2f"))
                    .row(json, Figure.label("catch-up after the last publish, s"),
                            Figure.shown("catchUpSeconds", catchUpS, Figure.round1(catchUpS)),
                            Figure.json("expectedIntervalMicros", expectedIntervalMicros),
                            Figure.json("connectSeconds", connectS),
                            Figure.json("totalDeliveries", deliveries(clients)));
            latencyRaw.toJson(json.putObject("latencyUncorrectedMs"));
            report.note("Client-side deliveries and latencies are measured in the load-test JVM, which shares "
                    + "the machine's cores with the server: on a small machine the clients' JSON parsing is a "
                    + "large part of the cost.");
        }
    }

    /** What the measured window saw: seconds, deliveries, publishes issued, CPU % of one core (-1: unknown). */
    private record Window(double seconds, long deliveries, long published, double serverCpu, double ownCpu) {
    }

    /**
     * HdrHistogram's coordinated-omission correction: the same histogram as if every value had been
     * recorded with {@code recordValueWithExpectedInterval(value, expectedIntervalMicros)} (the
     * library's post-recording equivalent, linear in distinct values rather than in samples).
     */
    static Histogram coCorrected(Histogram raw, long expectedIntervalMicros) {
        return raw.copyCorrectedForCoordinatedOmission(expectedIntervalMicros);
    }

    private static long connects(ClientFleet clients) {
        return clients.records().stream().mapToLong(c -> c.client().connects()).sum();
    }

    private static long deliveries(ClientFleet clients) {
        long n = 0;
        for (ClientRecord c : clients.records()) {
            n += c.count();
        }
        return n;
    }

    private static String cpuText(double pct) {
        return pct < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f %%", pct);
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
