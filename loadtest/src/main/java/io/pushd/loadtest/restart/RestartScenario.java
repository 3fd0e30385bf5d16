package io.pushd.loadtest.restart;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.fleet.ClientFleet;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.fleet.FleetSpec;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.report.BarChart;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.report.Table;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.EventId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
    record Plan(FleetSpec fleet, double rate, List<RestartMode> modes, Duration steady, Duration reconnectTimeout,
                Duration catchUpTimeout, Duration minSpread, double maxShare) {
    }

    private final Plan plan;
    private final ServerOptions serverOptions;
    private final RunOptions run;
    private final PrintStream out;
    private final Report report;
    private final String runId = ReportedRun.newRunId();

    RestartScenario(Plan plan, ServerOptions serverOptions, RunOptions run, String commandLine, PrintStream out) {
        this.plan = plan;
        this.serverOptions = serverOptions;
        this.run = run;
        this.out = out;
        String modes = plan.modes().stream().map(RestartMode::label).collect(Collectors.joining(", "));
        this.report = new Report("restart", String.format(Locale.ROOT, "Restart with %,d clients (%s)",
                plan.fleet().clients(), modes), commandLine);
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
        ReportedRun.commonSettings(report.setting("clients", f.clients())
                .setting("topics", f.topics())
                .setting("ratePerSecond", plan.rate())
                .setting("restarts", plan.modes().stream().map(RestartMode::label).toList())
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
        List<String> topics = Publisher.topicNames("lt-" + runId, f.topics()); // fresh: nobody else publishes to them
        try (ServerControl server = serverOptions.open(run.reportDir(), deadline, true)) {
            report.setting("server", server.describe());
            out.println("server: " + server.describe());
            try (ClientFleet fleet = ClientFleet.start(f, server.host(), server.port(), topics, deadline);
                 Publisher publisher = new Publisher(server.httpBase(), topics, plan.rate(), "lt-" + runId,
                         PUBLISH_RETRY_TIMEOUT, MAX_IN_FLIGHT)) {
                report.setting("clientTransport", fleet.transport());
                long t0 = System.nanoTime();
                if (!fleet.awaitConnected(t0, CONNECT_TIMEOUT, deadline, f.topics(), report, out,
                        "all clients connected and subscribed", "clients", "topics").all()) {
                    return;
                }

                publisher.start();
                deadline.sleep(plan.steady());
                List<RestartTiming> timings = new ArrayList<>();
                List<ReconnectStats> waves = new ArrayList<>();
                for (int i = 0; i < plan.modes().size(); i++) {
                    RestartMode mode = plan.modes().get(i);
                    out.printf(Locale.ROOT, "restart %d (%s): %s; %d events published so far%n", i + 1, mode.label(),
                            mode == RestartMode.GRACEFUL ? "SIGTERM" : "SIGKILL", publisher.issued());
                    publisher.disturbed(true);
                    RestartTiming timing = server.restart(mode, deadline);
                    timings.add(timing);
                    long trigger = timing.triggeredNanos();
                    List<ClientRecord> missing = fleet.await(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE,
                            plan.reconnectTimeout(), deadline);
                    long[] firsts = fleet.records().stream().mapToLong(c -> c.firstConnectAfter(trigger)).toArray();
                    ReconnectStats stats = ReconnectStats.of(trigger, firsts);
                    waves.add(stats);
                    out.printf(Locale.ROOT, "  server ready after %.1f s; %d/%d reconnected, first %.1f s, last %.1f s, "
                                    + "max %d in 1 s%n", timing.readyAfterMs() / 1000, stats.reconnected(),
                            stats.clients(), stats.firstMs() / 1000, stats.lastMs() / 1000, stats.maxInAnySecond());
                    publisher.disturbed(false);
                    if (!missing.isEmpty()) {
                        log.warn("{} clients did not reconnect within {}", missing.size(), plan.reconnectTimeout());
                    }
                    deadline.sleep(plan.steady());
                }
                reconnectChecks(fleet, timings, waves);

                publisher.stop();
                boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                deadline.check("waiting for the last publishes");
                out.printf(Locale.ROOT, "published %d events; %s%n", publisher.issued(),
                        settled ? "all answered" : publisher.inFlight() + " still unanswered");

                Map<String, EventId> heads = new LinkedHashMap<>();
                for (String t : topics) {
                    heads.put(t, publisher.head(t));
                }
                long c0 = System.nanoTime();
                List<ClientRecord> behind = fleet.await(c -> FleetAudit.caughtUp(c, heads.get(c.topic())), plan.catchUpTimeout(),
                        deadline);
                deadline.check("waiting for the clients to catch up");
                report.check("every client caught up", behind.isEmpty(), behind.isEmpty()
                        ? String.format(Locale.ROOT, "all %d clients at their topic's head %.1f s after the last "
                        + "publish was answered", f.clients(), (System.nanoTime() - c0) / 1e9)
                        : behind.size() + " clients behind after " + plan.catchUpTimeout().toSeconds() + " s, e.g. client "
                        + behind.get(0).index() + " at seq " + behind.get(0).lastSeq() + ", head "
                        + heads.get(behind.get(0).topic()));

                EventAudit.verify(fleet.records(), heads, publisher.acknowledged(), publisher.stats(), report);
                publisherData(publisher);
                // "steady": published while every client was connected; "restart": from the trigger
                // until every client was back (includes the down time and the clients' backoff).
                report.latency(LatencySummary.of("delivery, steady (publish sent → client got it)",
                        fleet.deliveryLatencyMicros(true).getIntervalHistogram(), 1000));
                report.latency(LatencySummary.of("delivery, published during a restart",
                        fleet.deliveryLatencyMicros(false).getIntervalHistogram(), 1000));
                report.latency(LatencySummary.of("publish acknowledged, steady (first attempt → 200/201)",
                        publisher.ackLatencyMicros(true).getIntervalHistogram(), 1000));
                report.latency(LatencySummary.of("publish acknowledged, during a restart (incl. retries)",
                        publisher.ackLatencyMicros(false).getIntervalHistogram(), 1000));
                publisher.problems().forEach(p -> report.note("publisher: " + p));
                out.println("closing the clients and stopping the server");
            }
        }
    }

    private void reconnectChecks(ClientFleet fleet, List<RestartTiming> timings, List<ReconnectStats> waves) {
        var restartsJson = report.data().putArray("restarts");
        List<List<Object>> rows = new ArrayList<>();
        for (int i = 0; i < timings.size(); i++) {
            RestartTiming t = timings.get(i);
            ReconnectStats s = waves.get(i);
            String name = "restart " + (i + 1) + " (" + t.mode().label() + ")";
            long windowEnd = i + 1 < timings.size() ? timings.get(i + 1).triggeredNanos() : System.nanoTime();
            Map<Integer, Integer> closeCodes = new TreeMap<>();
            for (ClientRecord c : fleet.records()) {
                for (int code : c.closeCodesBetween(t.triggeredNanos(), windowEnd)) {
                    closeCodes.merge(code, 1, Integer::sum);
                }
            }
            boolean all = s.reconnected() == s.clients();
            report.check(name + ": every client reconnected", all, String.format(Locale.ROOT,
                    "%d/%d within %d s", s.reconnected(), s.clients(), plan.reconnectTimeout().toSeconds()));
            report.check(name + ": reconnects spread over ≥ " + fmtS(plan.minSpread().toMillis()),
                    s.reconnected() > 0 && s.spreadMs() >= plan.minSpread().toMillis(),
                    String.format(Locale.ROOT, "first→last %.2f s (first at %.2f s, last at %.2f s after the trigger)",
                            s.spreadMs() / 1000, s.firstMs() / 1000, s.lastMs() / 1000));
            report.check(name + ": ≤ " + pct(plan.maxShare()) + " of the clients in any 1 s",
                    s.reconnected() > 0 && s.maxShare() <= plan.maxShare(),
                    String.format(Locale.ROOT, "max %s (%d clients, window from %.2f s)", pct(s.maxShare()),
                            s.maxInAnySecond(), s.maxWindowFromMs() / 1000));
            List<Long> hints = new ArrayList<>();
            for (ClientRecord c : fleet.records()) {
                hints.addAll(c.hintsBetween(t.triggeredNanos(), windowEnd));
            }
            if (!hints.isEmpty()) {
                // How the server spread its retry hints: share of the hints in each 1-second slice.
                long maxHint = hints.stream().mapToLong(Long::longValue).max().orElse(0);
                int[] perSecond = new int[(int) (maxHint / 1000) + 1];
                hints.forEach(h -> perSecond[(int) (h / 1000)]++);
                StringBuilder slices = new StringBuilder();
                var sliceJson = report.data().putObject("hints-restart-" + (i + 1));
                sliceJson.put("count", hints.size());
                sliceJson.put("maxMs", maxHint);
                var arr = sliceJson.putArray("perSecond");
                for (int k = 0; k < perSecond.length; k++) {
                    arr.add(perSecond[k]);
                    slices.append(String.format(Locale.ROOT, "%s[%d,%d) s: %.1f %%", k == 0 ? "" : ", ", k, k + 1,
                            100.0 * perSecond[k] / hints.size()));
                }
                report.note(name + ": " + hints.size() + " retry hints, max " + maxHint + " ms; " + slices);
                out.println("  " + name + " retry hints: " + slices);
            }
            if (t.mode() == RestartMode.GRACEFUL && t.exitCode() >= 0) {
                report.check(name + ": drained server exited 0", t.exitCode() == 0,
                        String.format(Locale.ROOT, "exit %d %.1f s after SIGTERM", t.exitCode(), t.stoppedAfterMs() / 1000));
            }
            rows.add(List.of(i + 1, t.mode().label(), t.exitCode(), round1(t.stoppedAfterMs() / 1000),
                    round1(t.readyAfterMs() / 1000), s.reconnected(), round2(s.firstMs() / 1000),
                    round2(s.lastMs() / 1000), round2(s.spreadMs() / 1000), round2(s.p50Ms() / 1000),
                    round2(s.p99Ms() / 1000), s.maxInAnySecond() + " (" + pct(s.maxShare()) + ")",
                    closeCodes.toString()));
            restartsJson.addObject()
                    .put("mode", t.mode().label())
                    .put("exitCode", t.exitCode())
                    .put("stoppedAfterMs", t.stoppedAfterMs())
                    .put("readyAfterMs", t.readyAfterMs())
                    .put("clients", s.clients())
                    .put("reconnected", s.reconnected())
                    .put("firstReconnectMs", s.firstMs())
                    .put("lastReconnectMs", s.lastMs())
                    .put("spreadMs", s.spreadMs())
                    .put("p50Ms", s.p50Ms())
                    .put("p99Ms", s.p99Ms())
                    .put("maxInAnySecond", s.maxInAnySecond())
                    .put("maxShareInAnySecond", s.maxShare())
                    .put("closeCodes", closeCodes.toString());
            List<BarChart.Marker> markers = new ArrayList<>();
            if (t.stoppedNanos() != -1 && t.exitCode() >= 0) {
                markers.add(new BarChart.Marker("old server gone", t.stoppedAfterMs()));
            }
            markers.add(new BarChart.Marker("new server ready", t.readyAfterMs()));
            report.chart(new BarChart(name + ": reconnects per 100 ms after " + (t.mode() == RestartMode.GRACEFUL
                    ? "SIGTERM" : "SIGKILL"), "reconnects", ReconnectStats.BIN_MS, s.bins100ms(), markers));
        }
        report.table(new Table("Restarts (times in seconds after the trigger)", List.of("#", "mode", "exit",
                "old gone", "new ready", "reconnected", "first", "last", "first→last", "p50", "p99",
                "max in 1 s", "close codes seen"), rows));
    }

    private void publisherData(Publisher publisher) {
        var s = publisher.stats();
        report.data().putObject("publisher")
                .put("issued", s.issued()).put("created", s.created()).put("deduplicated", s.deduplicated())
                .put("retries", s.retries()).put("refused503", s.refused503()).put("ioErrors", s.ioErrors())
                .put("gaveUp", s.gaveUp()).put("rejected", s.rejected()).put("skipped", s.skipped());
    }

    private static String pct(double share) {
        return String.format(Locale.ROOT, "%.1f %%", share * 100);
    }

    private static String fmtS(long ms) {
        return ms % 1000 == 0 ? (ms / 1000) + " s" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }

    private static double round1(double v) {
        return Math.round(v * 10) / 10.0;
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
