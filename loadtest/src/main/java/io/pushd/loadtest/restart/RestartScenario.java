package io.pushd.loadtest.restart;

import io.pushd.client.Transport;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.auth.TokenMode;
import io.pushd.loadtest.auth.Tokens;
import io.pushd.loadtest.fleet.ClientFleet;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.fleet.FleetSpec;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.publish.TopicsApi;
import io.pushd.loadtest.report.BarChart;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.FigureTable;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.EventId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restart scenario, step by step: start the server, connect the clients (live only), publish
 * steadily, restart the server as planned (waiting after each restart until every client is back),
 * stop publishing, wait for every publish to be acknowledged and every client to reach the head,
 * then check and report. Whatever happens, the report is written and everything started is stopped.
 */
final class RestartScenario {

    private static final Logger log = LoggerFactory.getLogger(RestartScenario.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PUBLISH_RETRY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(70);
    private static final int MAX_IN_FLIGHT = 20_000;

    /** What to do; validated by {@link RestartCommand}. */
    record Plan(FleetSpec fleet, Transport transport, double rate, List<RestartMode> modes, Duration steady, Duration reconnectTimeout,
                Duration catchUpTimeout, Duration minSpread, double maxShare) {
    }

    private final Plan plan;
    private final ServerOptions serverOptions;
    private final RunOptions run;
    private final PrintStream out;
    private final Report report;
    private final String runId = ReportedRun.newRunId();
    private TokenMode tokenMode = TokenMode.none;

    RestartScenario(Plan plan, ServerOptions serverOptions, RunOptions run, String commandLine, PrintStream out) {
        this.plan = plan;
        this.serverOptions = serverOptions;
        this.run = run;
        this.out = out;
        String modes = plan.modes().stream().map(RestartMode::label).collect(Collectors.joining(", "));
        this.report = new Report("restart", String.format(Locale.ROOT, "Restart with %,d %s clients (%s)",
                plan.fleet().clients(), plan.transport() == Transport.SSE ? "SSE" : "WebSocket", modes), commandLine);
    }

    /** Clients and publisher carry tokens of {@code mode} (default none); before {@link #run}. */
    RestartScenario withTokens(TokenMode mode) {
        this.tokenMode = mode;
        return this;
    }

    /** Runs, writes the report, prints the summary; true when every check passed. */
    boolean run() throws Exception {
        Deadline deadline = Deadline.in(run.timeout());
        settings();
        // a usage error found late (e.g. --url unreachable is not one; a bad option is) is thrown on
        return ReportedRun.run(report, run, deadline, out, log, true, this::execute);
    }

    private void settings() {
        FleetSpec f = plan.fleet();
        ReportedRun.commonSettings(report.setting("transport", plan.transport().label())
                .setting("clients", f.clients())
                .setting("topics", f.topics())
                .setting("ratePerSecond", plan.rate())
                .setting("restarts", plan.modes().stream().map(RestartMode::label).toList())
                .setting("tokenMode", tokenMode.name())
                .setting("steadyMs", plan.steady().toMillis())
                .setting("reconnectTimeoutMs", plan.reconnectTimeout().toMillis())
                .setting("catchUpTimeoutMs", plan.catchUpTimeout().toMillis())
                .setting("minSpreadMs", plan.minSpread().toMillis())
                .setting("maxSharePercent", plan.maxShare() * 100)
                .setting("clientThreads", f.clientThreads())
                .setting("sourceAddresses", f.sourceAddressesSetting()), run, runId);
    }

    private void execute(Deadline deadline) throws Exception {
        FleetSpec f = plan.fleet();
        List<String> topics = TopicsApi.topicNames("lt-" + runId, f.topics()); // fresh: nobody else publishes to them
        // Valid well past the run's own bound, so no session expires (4001) during it.
        try (Tokens tokens = Tokens.create(tokenMode, run.timeout().plusHours(1));
             ServerControl server = serverOptions.open(run.reportDir(), deadline, true, tokens.serverSets())) {
            report.setting("server", server.describe());
            report.setting("token", tokens.describe());
            out.println("server: " + server.describe());
            out.println("clients: " + f.clients() + " over " + plan.transport().label());
            out.println("tokens: " + tokens.describe());
            String[] clientTokens = tokens.forClients(f.clients(), topics);
            ClientFleet.Customizer withTokens = Tokens.clientTokens(clientTokens);
            try (ClientFleet fleet = ClientFleet.start(f, server.host(), server.port(), topics, deadline,
                    (i, b) -> withTokens.apply(i, b.transport(plan.transport())));
                 TopicsApi api = Publisher.api(server.host(), server.port(), tokens.forPublisher(topics));
                 Publisher publisher = new Publisher(api, topics, plan.rate(), "lt-" + runId,
                         PUBLISH_RETRY_TIMEOUT, MAX_IN_FLIGHT)) {
                report.setting("clientTransport", fleet.transport());
                long t0 = System.nanoTime();
                if (!fleet.awaitConnected(t0, CONNECT_TIMEOUT, deadline, f.topics(), report, out,
                        "all clients connected and subscribed", "clients", "topics").all()) {
                    return;
                }
                publisher.start();
                deadline.sleep(plan.steady());
                FigureTable restarts = report.figures("Restarts (times in seconds after the trigger)", List.of("#",
                        "mode", "exit", "old gone", "new ready", "reconnected", "first", "last", "first→last", "p50",
                        "p99", "max in 1 s", "close codes seen"), out);
                var restartsJson = report.data().putArray("restarts");
                for (int i = 0; i < plan.modes().size(); i++) {
                    restart(i, server, fleet, publisher, deadline, restarts, restartsJson.addObject());
                }
                publisher.stop();
                boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                deadline.check("waiting for the last publishes");
                out.printf(Locale.ROOT, "published %d events; %s%n", publisher.issued(),
                        settled ? "all answered" : publisher.inFlight() + " still unanswered");
                Map<String, EventId> heads = api.heads(topics, 1, Duration.ZERO, deadline);
                awaitCaughtUp(report, fleet, heads, plan.catchUpTimeout(), deadline);
                EventAudit.verify(fleet.records(), heads, publisher.acknowledged(), publisher.stats(), report);
                latencies(report, fleet, publisher);
                publisher.problems().forEach(p -> report.note("publisher: " + p));
                out.println("closing the clients and stopping the server");
            }
        }
    }

    /** Restart {@code i}: trigger, wait for every client, publish steadily again, then check and report it. */
    private void restart(int i, ServerControl server, ClientFleet fleet, Publisher publisher, Deadline deadline,
                         FigureTable table, ObjectNode json) throws InterruptedException {
        RestartMode mode = plan.modes().get(i);
        out.printf(Locale.ROOT, "restart %d (%s): %s; %d events published so far%n", i + 1, mode.label(),
                mode == RestartMode.GRACEFUL ? "SIGTERM" : "SIGKILL", publisher.issued());
        publisher.disturbed(true);
        RestartTiming t = server.restart(mode, deadline);
        long trigger = t.triggeredNanos();
        // A client refused (401/403) after the restart will not get back in with its token: stop waiting for it.
        List<ClientRecord> missing = fleet.await(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE
                || c.refusedSince(trigger), plan.reconnectTimeout(), deadline);
        missing.removeIf(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE);
        ReconnectStats s = ReconnectStats.of(trigger,
                fleet.records().stream().mapToLong(c -> c.firstConnectAfter(trigger)).toArray());
        publisher.disturbed(false);
        if (!missing.isEmpty()) {
            log.warn("{} clients did not reconnect within {}", missing.size(), plan.reconnectTimeout());
            ClientRecord.trails(missing, trigger).forEach(trail -> report.note("restart " + (i + 1) + ", not back: " + trail));
        } else {
            // the tail's story: what the last client back met on its way
            fleet.records().stream().max(Comparator.comparingLong(c -> c.firstConnectAfter(trigger) - trigger))
                    .ifPresent(c -> report.note("restart " + (i + 1) + ", last back: " + c.trail(trigger)));
        }
        deadline.sleep(plan.steady());
        long windowEnd = System.nanoTime(); // the next restart (or the end) follows at once
        String name = "restart " + (i + 1) + " (" + mode.label() + ")";
        reconnectChecks(name, t, s, ClientRecord.refusals(missing, trigger));
        Map<Integer, Integer> closeCodes = new TreeMap<>();
        List<Long> hints = new ArrayList<>();
        for (ClientRecord c : fleet.records()) {
            c.closeCodesBetween(trigger, windowEnd).forEach(code -> closeCodes.merge(code, 1, Integer::sum));
            hints.addAll(c.hintsBetween(trigger, windowEnd));
        }
        if (!hints.isEmpty()) {
            hints(i, name, HintSpread.of(hints));
        }
        table.row(json, Figure.label(i + 1), Figure.of("mode", mode.label()), Figure.of("exitCode", t.exitCode()),
                // an external server (--restart-command): its exit is not seen, so not shown as 0.0
                Figure.shown("stoppedAfterMs", t.stoppedAfterMs() < 0 ? null : t.stoppedAfterMs(),
                        t.stoppedAfterMs() < 0 ? "n/a" : Figure.round1(t.stoppedAfterMs() / 1000)),
                Figure.shown("readyAfterMs", t.readyAfterMs(), Figure.round1(t.readyAfterMs() / 1000)),
                Figure.json("clients", s.clients()), Figure.of("reconnected", s.reconnected()),
                Figure.seconds("firstReconnectMs", s.firstMs()), Figure.seconds("lastReconnectMs", s.lastMs()),
                Figure.seconds("spreadMs", s.spreadMs()), Figure.seconds("p50Ms", s.p50Ms()),
                Figure.seconds("p99Ms", s.p99Ms()),
                Figure.shown("maxInAnySecond", s.maxInAnySecond(), s.maxInAnySecond() + " (" + pct(s.maxShare()) + ")"),
                Figure.json("maxShareInAnySecond", s.maxShare()), Figure.of("closeCodes", closeCodes.toString()));
        chart(name, t, s);
    }

    private void reconnectChecks(String name, RestartTiming t, ReconnectStats s, String refusals) {
        report.check(name + ": every client reconnected", s.reconnected() == s.clients(), String.format(Locale.ROOT,
                "%d/%d within %d s of the server being ready", s.reconnected(), s.clients(),
                plan.reconnectTimeout().toSeconds()) + refusals);
        report.check(name + ": reconnects spread over ≥ " + fmtS(plan.minSpread().toMillis()),
                s.reconnected() > 0 && s.spreadMs() >= plan.minSpread().toMillis(),
                String.format(Locale.ROOT, "first→last %.2f s (first at %.2f s, last at %.2f s after the trigger)",
                        s.spreadMs() / 1000, s.firstMs() / 1000, s.lastMs() / 1000));
        report.check(name + ": ≤ " + pct(plan.maxShare()) + " of the clients in any 1 s",
                s.reconnected() > 0 && s.maxShare() <= plan.maxShare(),
                String.format(Locale.ROOT, "max %s (%d clients, window from %.2f s)", pct(s.maxShare()),
                        s.maxInAnySecond(), s.maxWindowFromMs() / 1000));
        if (t.mode() == RestartMode.GRACEFUL && t.exitCode() >= 0) {
            report.check(name + ": drained server exited 0", t.exitCode() == 0,
                    String.format(Locale.ROOT, "exit %d %.1f s after SIGTERM", t.exitCode(), t.stoppedAfterMs() / 1000));
        }
    }

    private void hints(int i, String name, HintSpread spread) {
        var json = report.data().putObject("hints-restart-" + (i + 1));
        json.put("count", spread.count()).put("maxMs", spread.maxMs());
        var perSecond = json.putArray("perSecond");
        for (int n : spread.perSecond()) {
            perSecond.add(n);
        }
        report.note(name + ": " + spread.count() + " retry hints, max " + spread.maxMs() + " ms; " + spread.slices());
        out.println("  " + name + " retry hints: " + spread.slices());
    }

    private void chart(String name, RestartTiming t, ReconnectStats s) {
        List<BarChart.Marker> markers = new ArrayList<>();
        if (t.stoppedNanos() != -1 && t.exitCode() >= 0) {
            markers.add(new BarChart.Marker("old server gone", t.stoppedAfterMs()));
        }
        markers.add(new BarChart.Marker("new server ready", t.readyAfterMs()));
        report.chart(new BarChart(name + ": reconnects per 100 ms after " + (t.mode() == RestartMode.GRACEFUL
                ? "SIGTERM" : "SIGKILL"), "reconnects", ReconnectStats.BIN_MS, s.bins100ms(), markers));
    }

    /** Waits until every client holds its topic's head; the check "every client caught up". */
    static void awaitCaughtUp(Report report, ClientFleet fleet, Map<String, EventId> heads, Duration catchUpTimeout,
                              Deadline deadline) throws InterruptedException {
        long c0 = System.nanoTime();
        List<ClientRecord> behind = fleet.await(c -> FleetAudit.caughtUp(c, heads.get(c.topic())),
                catchUpTimeout, deadline);
        deadline.check("waiting for the clients to catch up");
        report.check("every client caught up", behind.isEmpty(), behind.isEmpty()
                ? String.format(Locale.ROOT, "all %d clients at their topic's head %.1f s after the last "
                + "publish was answered", fleet.size(), (System.nanoTime() - c0) / 1e9)
                : behind.size() + " clients behind after " + catchUpTimeout.toSeconds() + " s, e.g. client "
                + behind.get(0).index() + " at seq " + behind.get(0).lastSeq() + ", head "
                + heads.get(behind.get(0).topic()));
    }

    /**
     * "steady": published while every client was connected; "restart": from the trigger until every
     * client was back (includes the down time and the clients' backoff).
     */
    static void latencies(Report report, ClientFleet fleet, Publisher publisher) {
        report.latency(LatencySummary.of("delivery, steady (publish sent → client got it)",
                fleet.deliveryLatencyMicros(true).getIntervalHistogram(), 1000));
        report.latency(LatencySummary.of("delivery, published during a restart",
                fleet.deliveryLatencyMicros(false).getIntervalHistogram(), 1000));
        report.latency(LatencySummary.of("publish acknowledged, steady (first attempt → 200/201)",
                publisher.ackLatencyMicros(true).getIntervalHistogram(), 1000));
        report.latency(LatencySummary.of("publish acknowledged, during a restart (incl. retries)",
                publisher.ackLatencyMicros(false).getIntervalHistogram(), 1000));
    }

    static String pct(double share) {
        return String.format(Locale.ROOT, "%.1f %%", share * 100);
    }

    static String fmtS(long ms) {
        return ms % 1000 == 0 ? (ms / 1000) + " s" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
