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
import io.pushd.loadtest.publish.PublishStats;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.report.Table;
import io.pushd.loadtest.server.ProcessCpu;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.EventId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
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
            List<String> topics = Publisher.topicNames("fo-" + runId, f.topics());
            try (ServerControl srv = server.open(run.reportDir(), deadline, false)) {
                report.setting("server", srv.describe());
                out.println("server: " + srv.describe());
                OptionalLong serverPid = ProcessCpu.childServerPid(srv);
                long c0 = System.nanoTime();
                try (ClientFleet clients = ClientFleet.start(f, srv.host(), srv.port(), topics, deadline);
                     Publisher publisher = new Publisher(srv.httpBase(), topics, rate, "fo-" + runId,
                             PUBLISH_RETRY_TIMEOUT, MAX_IN_FLIGHT)) {
                    report.setting("clientTransport", clients.transport());
                    ClientFleet.Connected connected = clients.awaitConnected(c0, CONNECT_TIMEOUT, deadline, f.topics(),
                            report, out, "all subscribers connected", "subscribers", "topic(s)");
                    if (!connected.all()) {
                        return;
                    }
                    double connectS = connected.seconds();
                    long connectsBefore = clients.records().stream().mapToLong(c -> c.client().connects()).sum();

                    // Warm-up events carry "steady":false and land in the other recorder: not measured.
                    publisher.disturbed(true);
                    publisher.start();
                    deadline.sleep(warmup);
                    clients.deliveryLatencyMicros(true).reset();
                    publisher.disturbed(false);
                    long d0 = deliveries(clients);
                    Optional<ProcessCpu.Sample> cpu0 = ProcessCpu.Sample.of(serverPid);
                    Optional<ProcessCpu.Sample> own0 = ProcessCpu.Sample.of(OptionalLong.of(ProcessHandle.current().pid()));
                    long issued0 = publisher.issued();
                    long t0 = System.nanoTime();
                    out.printf(Locale.ROOT, "warm-up done; measuring for %.1f s%n", duration.toMillis() / 1000.0);
                    deadline.sleep(duration);
                    long t1 = System.nanoTime();
                    long d1 = deliveries(clients);
                    Optional<ProcessCpu.Sample> cpu1 = ProcessCpu.Sample.of(serverPid);
                    Optional<ProcessCpu.Sample> own1 = ProcessCpu.Sample.of(OptionalLong.of(ProcessHandle.current().pid()));
                    long issued1 = publisher.issued();
                    publisher.stop();
                    boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                    deadline.check("waiting for the last publishes");

                    Map<String, EventId> heads = new LinkedHashMap<>();
                    for (String t : topics) {
                        heads.put(t, head(publisher, t, deadline));
                    }
                    long k0 = System.nanoTime();
                    List<ClientRecord> behind = clients.await(c -> FleetAudit.caughtUp(c, heads.get(c.topic())),
                            catchUpTimeout, deadline);
                    deadline.check("waiting for the subscribers to catch up");
                    double catchUpS = (System.nanoTime() - k0) / 1e9;
                    long connectsAfter = clients.records().stream().mapToLong(c -> c.client().connects()).sum();

                    double windowS = (t1 - t0) / 1e9;
                    double deliveriesPerS = (d1 - d0) / windowS;
                    double publishedPerS = (issued1 - issued0) / windowS;
                    double expectedPerS = rate * f.clients() / f.topics();
                    double serverCpu = ProcessCpu.Sample.percentOfOneCore(cpu0, cpu1);
                    double ownCpu = ProcessCpu.Sample.percentOfOneCore(own0, own1);

                    // Each subscriber expects one event every topics/rate seconds: that is the interval
                    // a stalled delivery would have hidden samples at (HdrHistogram's CO correction).
                    long expectedIntervalMicros = Math.max(1, Math.round(1e6 * f.topics() / rate));
                    Histogram raw = clients.deliveryLatencyMicros(true).getIntervalHistogram();
                    Histogram co = coCorrected(raw, expectedIntervalMicros);
                    LatencySummary latency = LatencySummary.of("publish → deliver, CO-corrected (interval "
                            + expectedIntervalMicros / 1000.0 + " ms)", co, 1000);
                    LatencySummary latencyRaw = LatencySummary.of("publish → deliver, as measured", raw, 1000);
                    report.latency(latency).latency(latencyRaw);

                    PublishStats ps = publisher.stats();
                    boolean allAcked = ps.gaveUp() == 0 && ps.rejected() == 0 && ps.skipped() == 0 && settled;
                    report.check("every publish acknowledged", allAcked, String.format(Locale.ROOT,
                            "%,d issued, %,d acknowledged, %,d retries, %,d gave up, %,d rejected, %,d skipped",
                            ps.issued(), ps.acknowledged(), ps.retries(), ps.gaveUp(), ps.rejected(), ps.skipped()));
                    report.check("every subscriber caught up", behind.isEmpty(), behind.isEmpty()
                            ? String.format(Locale.ROOT, "all at the head %.1f s after the last publish was answered",
                            catchUpS)
                            : behind.size() + " behind after " + catchUpTimeout.toSeconds() + " s, e.g. client "
                            + behind.get(0).index() + " at seq " + behind.get(0).lastSeq() + ", head "
                            + heads.get(behind.get(0).topic()));
                    FleetAudit.Result audit = FleetAudit.verify(clients.records(), heads, report);
                    report.check("no reconnects during the run", connectsAfter == connectsBefore,
                            (connectsAfter - connectsBefore) + " reconnects");

                    var fig = report.data().putObject("fanout");
                    fig.put("windowSeconds", windowS)
                            .put("publishedPerSecond", publishedPerS)
                            .put("deliveriesPerSecond", deliveriesPerS)
                            .put("expectedDeliveriesPerSecond", expectedPerS)
                            .put("deliveriesInWindow", d1 - d0)
                            .put("serverCpuPercentOfOneCore", serverCpu)
                            .put("loadGeneratorCpuPercentOfOneCore", ownCpu)
                            .put("serverPid", serverPid.isPresent() ? serverPid.getAsLong() : -1)
                            .put("expectedIntervalMicros", expectedIntervalMicros)
                            .put("catchUpSeconds", catchUpS)
                            .put("connectSeconds", connectS)
                            .put("totalDeliveries", audit.deliveries());
                    putLatency(fig.putObject("latencyMs"), latency);
                    putLatency(fig.putObject("latencyUncorrectedMs"), latencyRaw);
                    var pub = report.data().putObject("publisher");
                    pub.put("issued", ps.issued()).put("acknowledged", ps.acknowledged()).put("retries", ps.retries())
                            .put("gaveUp", ps.gaveUp()).put("rejected", ps.rejected()).put("skipped", ps.skipped());

                    report.table(new Table("Fan-out figures (measured window)", List.of("what", "value"), List.of(
                            List.of("published events/s", round1(publishedPerS)),
                            List.of("deliveries/s (client side)", round1(deliveriesPerS)),
                            List.of("expected deliveries/s (rate × subscribers / topics)", round1(expectedPerS)),
                            List.of("server CPU, % of one core", cpuText(serverCpu)),
                            List.of("load generator CPU (this JVM), % of one core", cpuText(ownCpu)),
                            List.of("latency p50 / p90 / p99 / p99.9 / max ms (CO-corrected)", String.format(Locale.ROOT,
                                    "%.2f / %.2f / %.2f / %.2f / %.2f", latency.p50Ms(), latency.p90Ms(),
                                    latency.p99Ms(), latency.p999Ms(), latency.maxMs())),
                            List.of("catch-up after the last publish, s", round1(catchUpS)))));
                    report.note("Client-side deliveries and latencies are measured in the load-test JVM, which shares "
                            + "the machine's cores with the server: on a small machine the clients' JSON parsing is a "
                            + "large part of the cost.");
                    publisher.problems().forEach(p -> report.note("publisher: " + p));
                    out.printf(Locale.ROOT, "deliveries %.0f/s (expected %.0f/s), server CPU %s of one core, latency "
                                    + "p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms%n", deliveriesPerS, expectedPerS,
                            cpuText(serverCpu), latency.p50Ms(), latency.p99Ms(), latency.p999Ms(), latency.maxMs());
                }
            }
        }
    }

    /**
     * HdrHistogram's coordinated-omission correction: the same histogram as if every value had been
     * recorded with {@code recordValueWithExpectedInterval(value, expectedIntervalMicros)} (the
     * library's post-recording equivalent, linear in distinct values rather than in samples).
     */
    static Histogram coCorrected(Histogram raw, long expectedIntervalMicros) {
        return raw.copyCorrectedForCoordinatedOmission(expectedIntervalMicros);
    }

    /** The topic's head; retried, since a saturated server may answer a GET slowly. */
    private static EventId head(Publisher publisher, String topic, Deadline deadline) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return publisher.head(topic);
            } catch (IllegalStateException e) {
                deadline.check("reading the topic heads");
                if (attempt >= 30) {
                    throw e;
                }
                log.info("retrying GET /v1/topics/{}: {}", topic, e.getMessage());
                Thread.sleep(500);
            }
        }
    }

    private static long deliveries(ClientFleet clients) {
        long n = 0;
        for (ClientRecord c : clients.records()) {
            n += c.count();
        }
        return n;
    }

    static void putLatency(com.fasterxml.jackson.databind.node.ObjectNode o, LatencySummary l) {
        o.put("count", l.count()).put("p50", l.p50Ms()).put("p90", l.p90Ms()).put("p99", l.p99Ms())
                .put("p999", l.p999Ms()).put("max", l.maxMs());
    }

    private static String cpuText(double pct) {
        return pct < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f %%", pct);
    }

    private static double round1(double v) {
        return Math.round(v * 10) / 10.0;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
