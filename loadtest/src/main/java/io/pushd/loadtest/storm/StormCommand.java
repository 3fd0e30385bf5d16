package io.pushd.loadtest.storm;

import io.pushd.client.Backoff;
import io.pushd.client.ClientState;
import io.pushd.client.PushClientOptions;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.OptionDefaults;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.auth.TokenOptions;
import io.pushd.loadtest.auth.Tokens;
import io.pushd.loadtest.fleet.ClientFleet;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.fleet.FleetOptions;
import io.pushd.loadtest.fleet.FleetSpec;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.publish.TopicsApi;
import io.pushd.loadtest.report.BarChart;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.FigureTable;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code storm}: why the reconnect promise matters. The same clients go through two restarts:
 * first a crash (SIGKILL) with clients that retry after a small fixed delay and ignore hints (no
 * jitter: a thundering herd against the server's admission control), then a graceful restart
 * (SIGTERM: drain with 1012 and a jittered {@code retryMs}) with the client library's default
 * backoff. For each: handshakes per 100 ms, 1013 closes, and the time until every client is back
 * and caught up. A demonstration, not a pass/fail gate: exit 1 only when an event was lost,
 * duplicated or reordered, or a phase did not finish.
 */
@Command(name = "storm", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        defaultValueProvider = StormCommand.Defaults.class,
        description = {
                "Restarts the server twice with the same clients connected: (1) SIGKILL with clients reconnecting "
                        + "after a fixed delay, no jitter, hints ignored; (2) SIGTERM (drain with 1012 + jittered "
                        + "retryMs) with the default client backoff. Reports per phase the handshakes per 100 ms "
                        + "(peak as handshakes/s), 1013 closes from admission control, and the time until every "
                        + "client is back and caught up; charts both phases.",
                "Exit code: 0 both phases completed and no event was lost, 1 otherwise, 2 usage error."
        })
public final class StormCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(StormCommand.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration PUBLISH_RETRY_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(100);
    private static final int MAX_IN_FLIGHT = 20_000;
    private static final int BIN_MS = 100;

    @Spec
    CommandSpec spec;

    @Mixin
    FleetOptions fleet;

    @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "100",
            description = "Events published per second over all topics, throughout.")
    double rate;

    @Option(names = "--handshake-limit", paramLabel = "PER_SECOND", defaultValue = "500",
            description = "Server limits.maxHandshakesPerSecond, so admission control (1013) is visible; "
                    + "0 = the server's default. Ignored when --server-set gives that key.")
    int handshakeLimit;

    @Option(names = "--storm-delay", paramLabel = "DURATION", defaultValue = "50ms", converter = DurationConverter.class,
            description = "Phase 1: the fixed delay before every reconnect attempt (no jitter, hints ignored).")
    Duration stormDelay;

    @Option(names = "--steady", paramLabel = "DURATION", defaultValue = "2s", converter = DurationConverter.class,
            description = "Steady publishing before each phase.")
    Duration steady;

    @Option(names = "--phase-timeout", paramLabel = "DURATION", defaultValue = "120s",
            converter = DurationConverter.class,
            description = "How long after each restart every client must be back and caught up.")
    Duration phaseTimeout;

    @Mixin
    ServerOptions server;

    @Mixin
    TokenOptions tokens;

    @Mixin
    RunOptions run;

    /** 2,000 clients, connected at 400/s so the initial connect stays under the handshake limit. */
    public static final class Defaults extends OptionDefaults {
        public Defaults() {
            super(Map.of("--clients", "2000", "--connect-rate", "400"));
        }
    }

    /** One restart and the client behaviour it is met with. */
    enum Phase {
        NO_JITTER("1: SIGKILL, clients retry after a fixed delay (no jitter, hints ignored)", RestartMode.CRASH, true),
        JITTER("2: SIGTERM drain, clients use the default backoff (jitter, retryMs hints)", RestartMode.GRACEFUL,
                false);

        final String title;
        final RestartMode mode;
        final boolean noJitter;

        Phase(String title, RestartMode mode, boolean noJitter) {
            this.title = title;
            this.mode = mode;
            this.noJitter = noJitter;
        }

        String key() {
            return noJitter ? "noJitter" : "jitter";
        }
    }

    @Override
    public Integer call() throws Exception {
        FleetSpec f = fleet.spec();
        Commands.checkRate(spec, rate);
        if (handshakeLimit < 0) {
            throw usage("--handshake-limit must be >= 0: " + handshakeLimit);
        }
        CommandLine.Model.OptionSpec sets = spec.findOption("--server-set");
        List<String> current = sets.getValue() == null ? List.of() : sets.getValue();
        if (handshakeLimit > 0 && current.stream().noneMatch(s -> s.startsWith("limits.maxHandshakesPerSecond="))
                && !spec.commandLine().getParseResult().hasMatchedOption("--url")) {
            List<String> withLimit = new ArrayList<>(current);
            withLimit.add("limits.maxHandshakesPerSecond=" + handshakeLimit);
            sets.setValue(withLimit);
        }
        server.validate(true);
        tokens.validate();
        return new Run(f, Commands.commandLine(spec), System.out).run() ? 0 : 1;
    }

    private ParameterException usage(String message) {
        return Commands.usage(spec, message);
    }

    /** What one phase measured. */
    record PhaseResult(Phase phase, RestartTiming timing, int clients, int back, double allBackMs, double caughtUpMs,
                       int handshakes, int peakPer100ms, double peakBinFromMs, long attempts, int closes1013,
                       Map<Integer, Integer> closeCodes, int[] handshakeBins, int[] bins1013) {

        int peakPerSecond() {
            return peakPer100ms * (1000 / BIN_MS);
        }

        /** Every client came back and caught up. */
        boolean complete() {
            return back == clients && caughtUpMs >= 0;
        }
    }

    private final class Run {

        private final FleetSpec f;
        private final PrintStream out;
        private final Report report;
        private final String runId = ReportedRun.newRunId();
        private final AtomicBoolean noJitter = new AtomicBoolean();

        Run(FleetSpec f, String commandLine, PrintStream out) {
            this.f = f;
            this.out = out;
            this.report = new Report("storm", String.format(Locale.ROOT,
                    "Reconnect storm: %,d clients, no jitter (SIGKILL) vs jitter + hints (SIGTERM)", f.clients()),
                    commandLine);
        }

        boolean run() throws Exception {
            Deadline deadline = Deadline.in(run.timeout());
            ReportedRun.commonSettings(report.setting("clients", f.clients())
                    .setting("topics", f.topics())
                    .setting("ratePerSecond", rate)
                    .setting("handshakeLimitPerSecond", handshakeLimit)
                    .setting("serverSets", spec.findOption("--server-set").getValue() == null ? List.of()
                            : (List<?>) spec.findOption("--server-set").getValue())
                    .setting("stormDelayMs", stormDelay.toMillis())
                    .setting("steadyMs", steady.toMillis())
                    .setting("phaseTimeoutMs", phaseTimeout.toMillis())
                    .setting("clientThreads", f.clientThreads())
                    .setting("connectRate", f.connectRate())
                    .setting("tokenMode", tokens.mode().name()), run, runId);
            return ReportedRun.run(report, run, deadline, out, log, this::execute);
        }

        private void execute(Deadline deadline) throws Exception {
            List<String> topics = TopicsApi.topicNames("st-" + runId, f.topics());
            Backoff fixed = (attempt, hint) -> stormDelay;
            Backoff jittered = Backoff.exponential(PushClientOptions.DEFAULT_BASE_DELAY,
                    PushClientOptions.DEFAULT_MAX_DELAY, PushClientOptions.DEFAULT_MAX_HINT, null);
            Backoff switching = (attempt, hint) -> noJitter.get() ? fixed.nextDelay(attempt, hint)
                    : jittered.nextDelay(attempt, hint);
            try (Tokens keys = Tokens.create(tokens.mode(), run.timeout().plusHours(1));
                 ServerControl srv = server.open(run.reportDir(), deadline, true, keys.serverSets())) {
                report.setting("server", srv.describe());
                report.setting("token", keys.describe());
                out.println("server: " + srv.describe());
                out.println("tokens: " + keys.describe());
                String[] clientTokens = keys.forClients(f.clients(), topics);
                long c0 = System.nanoTime();
                try (ClientFleet clients = ClientFleet.start(f, srv.host(), srv.port(), topics, deadline,
                        Tokens.clientTokens(clientTokens).andThen(b -> b.backoff(switching)));
                     TopicsApi api = Publisher.api(srv.host(), srv.port(), keys.forPublisher(topics));
                     Publisher publisher = new Publisher(api, topics, rate, "st-" + runId,
                             PUBLISH_RETRY_TIMEOUT, MAX_IN_FLIGHT)) {
                    report.setting("clientTransport", clients.transport());
                    if (!clients.awaitConnected(c0, CONNECT_TIMEOUT, deadline, f.topics(), report, out,
                            "all clients connected", "clients", "topics").all()) {
                        return;
                    }
                    publisher.start();
                    List<PhaseResult> results = phases(srv, clients, publisher, api, topics, deadline);
                    publisher.stop();
                    boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                    deadline.check("waiting for the last publishes");
                    Map<String, EventId> heads = heads(api, topics, deadline);
                    List<ClientRecord> behind = clients.await(c -> FleetAudit.caughtUp(c, heads.get(c.topic())),
                            phaseTimeout, deadline);
                    deadline.check("waiting for the clients to catch up");
                    report.check("every client caught up at the end", behind.isEmpty(),
                            behind.isEmpty() ? "all " + f.clients() + " at their topic's head"
                                    : behind.size() + " behind, e.g. client " + behind.get(0).index());
                    publisher.stats().report(report);
                    FleetAudit.verify(clients.records(), heads, report);
                    results.forEach(this::phaseReport);
                    publisher.problems().forEach(p -> report.note("publisher: " + p));
                    report.note("Phase 1 clients ignore the server's retryMs and retry every "
                            + stormDelay.toMillis() + " ms in lock-step, so the restarted server is hit by the whole "
                            + "crowd at once and admission control answers most handshakes with 1013; phase 2 is "
                            + "what the protocol asks of clients.");
                }
            }
        }

        /** Both phases in order, each after a steady spell; stops after a phase that did not complete. */
        private List<PhaseResult> phases(ServerControl srv, ClientFleet clients, Publisher publisher, TopicsApi api,
                                         List<String> topics, Deadline deadline) throws InterruptedException {
            FigureTable table = report.figures("Phases (times in seconds after the signal)", List.of("phase",
                    "restart", "server ready", "back", "all back", "all caught up", "handshakes",
                    "peak handshakes/s (100 ms bins)", "connect attempts", "1013 closes", "close codes"), out);
            var json = report.data().putObject("phases");
            List<PhaseResult> results = new ArrayList<>();
            for (Phase phase : Phase.values()) {
                noJitter.set(phase.noJitter);
                deadline.sleep(steady);
                PhaseResult r = phase(phase, srv, clients, publisher, api, topics, deadline);
                results.add(r);
                row(table, json.putObject(phase.key()), r);
                if (!r.complete()) {
                    break;
                }
            }
            noJitter.set(false);
            return results;
        }

        private PhaseResult phase(Phase phase, ServerControl srv, ClientFleet clients, Publisher publisher,
                                  TopicsApi api, List<String> topics, Deadline deadline) throws InterruptedException {
            out.printf(Locale.ROOT, "phase %s; %d events published so far%n", phase.title, publisher.issued());
            long attempts0 = attempts(clients);
            publisher.disturbed(true);
            HandshakeSampler sampler = HandshakeSampler.start(() -> handshakes(clients), BIN_MS);
            RestartTiming timing;
            try {
                timing = srv.restart(phase.mode, deadline);
            } catch (RuntimeException | InterruptedException e) {
                sampler.stop();
                throw e;
            }
            long trigger = timing.triggeredNanos();
            double caughtUpMs = awaitBackAndCaughtUp(clients, api, topics, trigger, deadline);
            publisher.disturbed(false);
            sampler.stop();
            long end = System.nanoTime();
            int nBins = (int) Math.max(1, (end - trigger) / 1_000_000 / BIN_MS + 1);
            int[] bins = sampler.bins(trigger, nBins);
            int[] bins1013 = new int[nBins];
            Map<Integer, Integer> codes = new TreeMap<>();
            int back = 0;
            long lastBack = trigger;
            for (ClientRecord c : clients.records()) {
                for (int code : c.closeCodesBetween(trigger, end)) {
                    codes.merge(code, 1, Integer::sum);
                }
                for (long at : c.closesBetween(trigger, end, CloseCode.TRY_AGAIN_LATER.code())) {
                    bins1013[(int) ((at - trigger) / 1_000_000 / BIN_MS)]++; // the same closes as closes1013
                }
                if (back(c, trigger)) {
                    back++;
                    lastBack = Math.max(lastBack, c.client().lastConnectedNanos());
                }
            }
            int peakBin = peakBin(bins);
            return new PhaseResult(phase, timing, clients.size(), back, (lastBack - trigger) / 1e6, caughtUpMs,
                    Arrays.stream(bins).sum(), bins[peakBin], peakBin * (double) BIN_MS,
                    attempts(clients) - attempts0, codes.getOrDefault(CloseCode.TRY_AGAIN_LATER.code(), 0), codes,
                    bins, bins1013);
        }

        /** Milliseconds from the trigger until every client was back and held its head, or -1. */
        private double awaitBackAndCaughtUp(ClientFleet clients, TopicsApi api, List<String> topics, long trigger,
                                            Deadline deadline) throws InterruptedException {
            List<ClientRecord> notBack = clients.await(c -> back(c, trigger), phaseTimeout, deadline);
            deadline.check("waiting for the clients to come back");
            if (!notBack.isEmpty()) {
                return -1;
            }
            // Everything published before and during the outage, acknowledged by now.
            Map<String, EventId> heads = heads(api, topics, deadline);
            List<ClientRecord> behind = clients.await(
                    c -> back(c, trigger) && FleetAudit.caughtUp(c, heads.get(c.topic())), phaseTimeout, deadline);
            deadline.check("waiting for the clients to catch up");
            return behind.isEmpty() ? (System.nanoTime() - trigger) / 1e6 : -1;
        }

        private void row(FigureTable table, ObjectNode json, PhaseResult r) {
            RestartTiming t = r.timing();
            table.row(json, Figure.label(r.phase().noJitter ? "1 no jitter" : "2 jitter + hints"),
                    Figure.of("restart", t.mode() == RestartMode.CRASH ? "SIGKILL" : "SIGTERM"),
                    Figure.json("clientBackoff", r.phase().noJitter ? "fixed " + stormDelay.toMillis()
                            + " ms, no jitter, hints ignored" : "default (full jitter, retryMs honoured)"),
                    Figure.json("completed", r.complete()), Figure.json("clients", r.clients()),
                    Figure.json("stoppedAfterMs", t.stoppedAfterMs()), Figure.seconds("readyAfterMs", t.readyAfterMs()),
                    Figure.shown("back", r.back(), r.back() + "/" + r.clients()),
                    Figure.seconds("allBackMs", r.allBackMs()),
                    r.caughtUpMs() < 0 ? Figure.shown("caughtUpMs", r.caughtUpMs(), "-")
                            : Figure.seconds("caughtUpMs", r.caughtUpMs()),
                    Figure.of("handshakes", r.handshakes()), Figure.json("peakHandshakesPer100ms", r.peakPer100ms()),
                    Figure.of("peakHandshakesPerSecond", r.peakPerSecond()),
                    Figure.json("peakBinFromMs", r.peakBinFromMs()), Figure.of("connectAttempts", r.attempts()),
                    Figure.of("closes1013", r.closes1013()), Figure.of("closeCodes", r.closeCodes().toString()));
        }

        /** The phase's check and its two charts. */
        private void phaseReport(PhaseResult r) {
            RestartTiming t = r.timing();
            report.check("phase " + r.phase().title + ": every client back and caught up", r.complete(),
                    String.format(Locale.ROOT, "%d/%d back, all back %.2f s and caught up %s after the %s",
                            r.back(), r.clients(), r.allBackMs() / 1000, r.caughtUpMs() < 0 ? "never"
                                    : String.format(Locale.ROOT, "%.2f s", r.caughtUpMs() / 1000),
                            t.mode() == RestartMode.CRASH ? "SIGKILL" : "SIGTERM"));
            List<BarChart.Marker> markers = new ArrayList<>();
            if (t.stoppedNanos() != -1) {
                markers.add(new BarChart.Marker("old server gone", t.stoppedAfterMs()));
            }
            markers.add(new BarChart.Marker("new server ready", t.readyAfterMs()));
            markers.add(new BarChart.Marker("all back", r.allBackMs()));
            if (r.caughtUpMs() >= 0) {
                markers.add(new BarChart.Marker("all caught up", r.caughtUpMs()));
            }
            report.chart(new BarChart("Phase " + r.phase().title + ": WebSocket handshakes per 100 ms",
                    "handshakes", BIN_MS, r.handshakeBins(), markers));
            report.chart(new BarChart("Phase " + (r.phase().noJitter ? "1" : "2")
                    + ": 1013 closes (admission control) per 100 ms", "1013 closes", BIN_MS, r.bins1013(), markers));
        }

        private boolean back(ClientRecord c, long trigger) {
            var pc = c.client();
            if (pc.state() != ClientState.CONNECTED) {
                return false;
            }
            long t = pc.lastConnectedNanos();
            return t - trigger >= 0 && c.closeCodesBetween(t, System.nanoTime() + 1).isEmpty();
        }
    }

    /** The first bin with the most counts. */
    static int peakBin(int[] bins) {
        int peak = 0;
        for (int b = 1; b < bins.length; b++) {
            if (bins[b] > bins[peak]) {
                peak = b;
            }
        }
        return peak;
    }

    private static long handshakes(ClientFleet clients) {
        long n = 0;
        for (ClientRecord c : clients.records()) {
            if (c.client() != null) {
                n += c.client().connects();
            }
        }
        return n;
    }

    private static long attempts(ClientFleet clients) {
        long n = 0;
        for (ClientRecord c : clients.records()) {
            n += c.client().connectAttempts();
        }
        return n;
    }

    /** Each topic's head; retried, since a server in the middle of a storm may answer slowly. */
    private static Map<String, EventId> heads(TopicsApi api, List<String> topics, Deadline deadline)
            throws InterruptedException {
        return api.heads(topics, 20, Duration.ofMillis(250), deadline);
    }
}
