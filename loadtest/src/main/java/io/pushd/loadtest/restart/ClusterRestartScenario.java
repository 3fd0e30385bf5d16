package io.pushd.loadtest.restart;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.client.PushClientOptions;
import io.pushd.client.Transport;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.auth.TokenMode;
import io.pushd.loadtest.auth.Tokens;
import io.pushd.loadtest.cluster.ConnectionLog;
import io.pushd.loadtest.cluster.ManagedCluster;
import io.pushd.loadtest.fleet.ClientFleet;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetSpec;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.publish.TopicsApi;
import io.pushd.loadtest.report.BarChart;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.FigureTable;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.protocol.EventId;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code restart --nodes N}: the restart promise on a cluster. Redis, N nodes and the real nginx in
 * front (round robin); the clients and the publisher talk to nginx only. Phase 1 restarts every
 * node once, one after another, gracefully (SIGTERM: the drain's 1012 + hints), each ready again
 * before the next; phase 2 kills one node ({@code kill -9}) and starts it again. After each step,
 * the clients that node had are checked: every one back, reconnects spread over at least
 * {@code --min-spread}, at most {@code --max-share} of them in any second, and the last one back
 * within its reconnect window (the hint, or after a crash the client's own first-retry jitter) plus
 * {@code --late-margin}, because the other nodes are up. At the end every client must hold every
 * acknowledged event exactly once ({@link EventAudit}).
 *
 * <p>Which node a client left and where it landed comes from nginx's own record of each
 * subscription ({@link ConnectionLog}): every client binds its own loopback source address, so
 * nginx's log names the client and the node that served it. That log is complete once the
 * clients are closed, so the per-node table is written last.
 */
final class ClusterRestartScenario {

    private static final Logger log = LoggerFactory.getLogger(ClusterRestartScenario.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PUBLISH_RETRY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(70);
    private static final Duration LOG_SETTLE = Duration.ofSeconds(5);
    private static final int MAX_IN_FLIGHT = 20_000;
    /** Clients bind 127.100.x.y (x 0-253, y 1-254): one address each, so nginx's log names them. */
    static final int MAX_CLIENTS = 254 * 254;

    /** What to do; validated by {@link RestartCommand}. */
    record Plan(FleetSpec fleet, Transport transport, double rate, int nodes, boolean rolling, boolean crash,
                int crashNode, Duration steady, Duration reconnectTimeout, Duration catchUpTimeout,
                Duration minSpread, Duration minSpreadCrash, double maxShare, Duration lateMargin) {

        /** The spread a step of {@code mode} must reach. */
        Duration minSpread(RestartMode mode) {
            return mode == RestartMode.CRASH ? minSpreadCrash : minSpread;
        }
    }

    /** The binaries and settings of the cluster; resolved by {@link RestartCommand}. */
    record Machines(java.nio.file.Path serverJar, java.nio.file.Path redis, java.nio.file.Path nginx,
                    List<String> nodeSets) {
    }

    /** One restart of one node, what the clients did, for the per-node table at the end. */
    private record Step(int number, String phase, int node, RestartMode mode, long triggerNanos, long endNanos,
                        List<Integer> affected) {
    }

    private final Plan plan;
    private final Machines machines;
    private final RunOptions run;
    private final PrintStream out;
    private final Report report;
    private final String runId = ReportedRun.newRunId();
    private final List<Step> steps = new ArrayList<>();
    private TokenMode tokenMode = TokenMode.none;

    ClusterRestartScenario(Plan plan, Machines machines, RunOptions run, String commandLine, PrintStream out) {
        this.plan = plan;
        this.machines = machines;
        this.run = run;
        this.out = out;
        List<String> phases = new ArrayList<>();
        if (plan.rolling()) {
            phases.add("rolling graceful restart");
        }
        if (plan.crash()) {
            phases.add("kill -9 of node " + plan.crashNode());
        }
        this.report = new Report("restart", String.format(Locale.ROOT, "Cluster of %d nodes behind nginx, %,d %s "
                + "clients (%s)", plan.nodes(), plan.fleet().clients(), plan.transport() == Transport.SSE ? "SSE"
                : "WebSocket", String.join(", then ", phases)), commandLine);
    }

    /** Clients and publisher carry tokens of {@code mode} (default none); before {@link #run}. */
    ClusterRestartScenario withTokens(TokenMode mode) {
        this.tokenMode = mode;
        return this;
    }

    /** Client {@code i}'s own source address: 127.100.x.y. */
    static InetAddress clientAddress(int i) {
        try {
            return InetAddress.getByAddress(new byte[] {127, 100, (byte) (i / 254), (byte) (i % 254 + 1)});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // four bytes are always an address
        }
    }

    /** The client index of an address from {@link #clientAddress}, else -1. */
    static int clientIndex(String address) {
        String[] p = address.split("\\.");
        if (p.length != 4 || !"127".equals(p[0]) || !"100".equals(p[1])) {
            return -1;
        }
        try {
            int x = Integer.parseInt(p[2]);
            int y = Integer.parseInt(p[3]);
            return y >= 1 && y <= 254 && x >= 0 && x < 254 ? x * 254 + y - 1 : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Runs, writes the report, prints the summary; true when every check passed. */
    boolean run() throws Exception {
        Deadline deadline = Deadline.in(run.timeout());
        FleetSpec f = plan.fleet();
        ReportedRun.commonSettings(report.setting("nodes", plan.nodes())
                .setting("transport", plan.transport().label())
                .setting("clients", f.clients())
                .setting("topics", f.topics())
                .setting("ratePerSecond", plan.rate())
                .setting("rollingRestart", plan.rolling())
                .setting("crashNode", plan.crash() ? plan.crashNode() : null)
                .setting("tokenMode", tokenMode.name())
                .setting("steadyMs", plan.steady().toMillis())
                .setting("reconnectTimeoutMs", plan.reconnectTimeout().toMillis())
                .setting("catchUpTimeoutMs", plan.catchUpTimeout().toMillis())
                .setting("minSpreadMs", plan.minSpread().toMillis())
                .setting("minSpreadCrashMs", plan.minSpreadCrash().toMillis())
                .setting("maxSharePercent", plan.maxShare() * 100)
                .setting("lateMarginMs", plan.lateMargin().toMillis())
                .setting("clientThreads", f.clientThreads())
                .setting("sourceAddresses", "one per client, 127.100.x.y"), run, runId);
        return ReportedRun.run(report, run, deadline, out, log, true, this::execute);
    }

    private void execute(Deadline deadline) throws Exception {
        FleetSpec given = plan.fleet();
        List<InetAddress> addresses = new ArrayList<>(given.clients());
        for (int i = 0; i < given.clients(); i++) {
            addresses.add(clientAddress(i));
        }
        FleetSpec f = new FleetSpec(given.clients(), given.topics(), addresses, given.clientThreads(),
                given.connectRate());
        List<String> topics = TopicsApi.topicNames("lt-" + runId, f.topics());
        try (Tokens tokens = Tokens.create(tokenMode, run.timeout().plusHours(1))) {
            List<String> sets = new ArrayList<>(machines.nodeSets());
            sets.addAll(tokens.serverSets());
            ManagedCluster.Spec spec = new ManagedCluster.Spec(machines.serverJar(), machines.redis(), machines.nginx(),
                    plan.nodes(), sets, f.clients(), topics.get(0));
            try (ManagedCluster cluster = ManagedCluster.start(spec, run.reportDir(), deadline)) {
                report.setting("cluster", cluster.describe());
                report.setting("token", tokens.describe());
                cluster.describe().forEach(line -> out.println("started " + line));
                out.println("clients: " + f.clients() + " over " + plan.transport().label() + " through nginx");
                String[] clientTokens = tokens.forClients(f.clients(), topics);
                ClientFleet.Customizer withTokens = Tokens.clientTokens(clientTokens);
                ClientFleet fleet = ClientFleet.start(f, cluster.host(), cluster.port(), topics, deadline,
                        (i, b) -> withTokens.apply(i, b.transport(plan.transport())));
                try (TopicsApi api = Publisher.api(cluster.host(), cluster.port(), tokens.forPublisher(topics));
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
                    FigureTable table = report.figures("Node restarts (times in seconds after the signal; "
                            + "the clients are those the node had)", List.of("#", "phase", "node", "mode", "exit",
                            "node gone", "node ready", "its clients", "back", "first", "last", "first→last", "p50",
                            "max in 1 s", "last due", "late after hint p50 ms", "p99 ms", "max ms", "close codes"),
                            out);
                    ArrayNode json = report.data().putArray("restarts");
                    if (plan.rolling()) {
                        for (int k = 1; k <= plan.nodes(); k++) {
                            step("rolling", k, RestartMode.GRACEFUL, cluster, fleet, publisher, deadline, table,
                                    json.addObject());
                        }
                    }
                    if (plan.crash()) {
                        step("crash", plan.crashNode(), RestartMode.CRASH, cluster, fleet, publisher, deadline, table,
                                json.addObject());
                    }
                    publisher.stop();
                    boolean settled = publisher.awaitSettled(SETTLE_TIMEOUT, deadline);
                    deadline.check("waiting for the last publishes");
                    out.printf(Locale.ROOT, "published %d events; %s%n", publisher.issued(),
                            settled ? "all answered" : publisher.inFlight() + " still unanswered");
                    Map<String, EventId> heads = api.heads(topics, 1, Duration.ZERO, deadline);
                    RestartScenario.awaitCaughtUp(report, fleet, heads, plan.catchUpTimeout(), deadline);
                    EventAudit.verify(fleet.records(), heads, publisher.acknowledged(), publisher.stats(), report);
                    RestartScenario.latencies(report, fleet, publisher);
                    publisher.problems().forEach(p -> report.note("publisher: " + p));
                } finally {
                    out.println("closing the clients");
                    fleet.close();
                }
                perNode(cluster, deadline);
                out.println("stopping nginx, the nodes and Redis");
            }
        }
    }

    /** One node down and back: trigger, wait for its clients, steady publishing, then check and report. */
    private void step(String phase, int node, RestartMode mode, ManagedCluster cluster, ClientFleet fleet,
                      Publisher publisher, Deadline deadline, FigureTable table, ObjectNode json)
            throws InterruptedException {
        int number = steps.size() + 1;
        String name = String.format(Locale.ROOT, "step %d (%s, node-%d, %s)", number, phase, node, mode.label());
        out.printf(Locale.ROOT, "step %d: %s of node-%d (%s); %d events published so far%n", number,
                mode == RestartMode.GRACEFUL ? "SIGTERM" : "SIGKILL", node, phase, publisher.issued());
        publisher.disturbed(true);
        // The replacement is launched once the old node's clients are back on the other nodes. On
        // one machine a JVM starting up takes both cores for seconds, exactly while the clients
        // reconnect: the clients' timers and the other nodes then stall together and come back in
        // bursts (one run launching at once: 40 % in one second with uniform hints). On separate
        // machines a starting node competes with no one; nobody reconnects to it meanwhile anyway.
        // Connected, not merely refused: a client another node refused (1013) is still on its way.
        RestartTiming t = cluster.restart(node, mode, deadline,
                triggered -> awaitConnected(affectedSince(fleet, triggered), triggered, deadline));
        long trigger = t.triggeredNanos();
        // Its clients are those whose connection ended since the signal: a drain closed them before
        // the old process exited, a crash at once.
        List<ClientRecord> affected = affectedSince(fleet, trigger);
        List<ClientRecord> missing = awaitBack(fleet, affected, trigger, deadline);
        long[] back = affected.stream().mapToLong(c -> c.firstConnectAfter(trigger)).toArray();
        ReconnectStats s = ReconnectStats.of(trigger, back);
        publisher.disturbed(false);
        if (!missing.isEmpty()) {
            log.warn("{} clients of node-{} did not reconnect within {}", missing.size(), node,
                    plan.reconnectTimeout());
            ClientRecord.trails(missing, trigger).forEach(trail -> report.note(name + ", not back: " + trail));
        }
        deadline.sleep(plan.steady());
        long end = System.nanoTime();
        steps.add(new Step(number, phase, node, mode, trigger, end, affected.stream().map(ClientRecord::index).toList()));

        // When each client was due back: its disconnect plus the server's hint, or without a hint
        // the client's own first retry, at most its base delay (full jitter in [0, baseDelay]); an
        // SSE client's is its stream's retry:, at most drain.minWindow (5 s by default, too).
        double lastDueMs = -1;
        Map<Integer, Integer> closeCodes = new TreeMap<>();
        List<Long> hints = new ArrayList<>();
        // How late each hinted client came back after its hint ran out (its reconnect and subscribe,
        // plus any stall of the client, nginx or the node taking it). Only a hint says when a
        // client meant to come back; after a crash the client's own jitter is not observable.
        Histogram lateMicros = new Histogram(3);
        for (ClientRecord c : affected) {
            ClientRecord.Disconnect d = c.firstDisconnectAfter(trigger);
            long wait = d.retryMs() >= 0 ? d.retryMs() : PushClientOptions.DEFAULT_BASE_DELAY.toMillis();
            lastDueMs = Math.max(lastDueMs, (d.nanos() - trigger) / 1e6 + wait);
            long backAt = c.firstConnectAfter(trigger);
            if (d.retryMs() >= 0 && backAt != ClientRecord.NONE) {
                lateMicros.recordValue(Math.max(0, (backAt - d.nanos()) / 1_000 - d.retryMs() * 1_000));
            }
            c.closeCodesBetween(trigger, end).forEach(code -> closeCodes.merge(code, 1, Integer::sum));
            hints.addAll(c.hintsBetween(trigger, end));
        }
        checks(name, node, t, s, lastDueMs, ClientRecord.refusals(missing, trigger));
        if (!hints.isEmpty()) {
            HintSpread spread = HintSpread.of(hints);
            report.note(name + ": " + spread.count() + " retry hints, max " + spread.maxMs() + " ms; "
                    + spread.slices());
            out.println("  " + name + " retry hints: " + spread.slices());
        }
        table.row(json, Figure.label(number), Figure.of("phase", phase), Figure.shown("node", node, "node-" + node),
                Figure.of("mode", mode.label()), Figure.of("exitCode", t.exitCode()),
                Figure.shown("stoppedAfterMs", t.stoppedAfterMs(), Figure.round1(t.stoppedAfterMs() / 1000)),
                Figure.shown("readyAfterMs", t.readyAfterMs(), Figure.round1(t.readyAfterMs() / 1000)),
                Figure.of("clients", s.clients()), Figure.of("reconnected", s.reconnected()),
                Figure.seconds("firstReconnectMs", s.firstMs()), Figure.seconds("lastReconnectMs", s.lastMs()),
                Figure.seconds("spreadMs", s.spreadMs()), Figure.seconds("p50Ms", s.p50Ms()),
                Figure.shown("maxInAnySecond", s.maxInAnySecond(), s.maxInAnySecond() + " ("
                        + RestartScenario.pct(s.maxShare()) + ")"),
                Figure.json("maxShareInAnySecond", s.maxShare()), Figure.seconds("lastDueMs", lastDueMs),
                late(lateMicros, "lateAfterHintP50Ms", 50), late(lateMicros, "lateAfterHintP99Ms", 99),
                late(lateMicros, "lateAfterHintMaxMs", 100), Figure.of("closeCodes", closeCodes.toString()));
        List<BarChart.Marker> markers = new ArrayList<>();
        if (t.exitCode() >= 0) {
            markers.add(new BarChart.Marker("node gone", t.stoppedAfterMs()));
        }
        markers.add(new BarChart.Marker("node ready", t.readyAfterMs()));
        report.chart(new BarChart(name + ": its clients' reconnects per 100 ms after "
                + (mode == RestartMode.GRACEFUL ? "SIGTERM" : "SIGKILL"), "reconnects", ReconnectStats.BIN_MS,
                s.bins100ms(), markers));
    }

    /** A percentile of the lateness after the hint, in milliseconds; "-" without hints (a crash). */
    private static Figure late(Histogram h, String key, double percentile) {
        if (h.getTotalCount() == 0) {
            return Figure.shown(key, null, "-");
        }
        long micros = percentile >= 100 ? h.getMaxValue() : h.getValueAtPercentile(percentile);
        return Figure.shown(key, micros / 1e3, Math.round(micros / 1e3));
    }

    /** Waits until every affected client is back (or refused with 401/403); returns those that are not back. */
    private void awaitConnected(List<ClientRecord> clients, long trigger, Deadline deadline)
            throws InterruptedException {
        List<ClientRecord> pending = new ArrayList<>(clients);
        long stop = System.nanoTime() + deadline.cap(plan.reconnectTimeout()).toNanos();
        while (!pending.isEmpty() && System.nanoTime() - stop < 0) {
            pending.removeIf(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE);
            Thread.sleep(50);
        }
    }

    private static List<ClientRecord> affectedSince(ClientFleet fleet, long trigger) {
        List<ClientRecord> affected = new ArrayList<>();
        for (ClientRecord c : fleet.records()) {
            if (c.firstDisconnectAfter(trigger) != null) {
                affected.add(c);
            }
        }
        return affected;
    }

    private List<ClientRecord> awaitBack(ClientFleet fleet, List<ClientRecord> affected, long trigger,
                                         Deadline deadline) throws InterruptedException {
        List<ClientRecord> pending = new ArrayList<>(affected);
        long stop = System.nanoTime() + deadline.cap(plan.reconnectTimeout()).toNanos();
        while (true) {
            pending.removeIf(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE || c.refusedSince(trigger));
            if (pending.isEmpty() || System.nanoTime() - stop >= 0) {
                break;
            }
            Thread.sleep(50);
        }
        pending.removeIf(c -> c.firstConnectAfter(trigger) != ClientRecord.NONE);
        return pending;
    }

    private void checks(String name, int node, RestartTiming t, ReconnectStats s, double lastDueMs, String refusals) {
        report.check(name + ": the node's clients were disconnected", s.clients() > 0,
                s.clients() + " clients lost their connection to node-" + node);
        report.check(name + ": every client of the node reconnected", s.reconnected() == s.clients(),
                String.format(Locale.ROOT, "%d/%d within %d s", s.reconnected(), s.clients(),
                        plan.reconnectTimeout().toSeconds()) + refusals);
        long minSpread = plan.minSpread(t.mode()).toMillis();
        report.check(name + ": reconnects spread over ≥ " + RestartScenario.fmtS(minSpread)
                        + (t.mode() != RestartMode.CRASH ? "" : plan.transport() == Transport.SSE
                        ? " (no hint after a kill -9: the streams' 1-5 s retry:)"
                        : " (no hint after a kill -9: the clients' 0-5 s jitter)"),
                s.reconnected() > 0 && s.spreadMs() >= minSpread,
                String.format(Locale.ROOT, "first→last %.2f s (first at %.2f s, last at %.2f s after the signal)",
                        s.spreadMs() / 1000, s.firstMs() / 1000, s.lastMs() / 1000));
        report.check(name + ": ≤ " + RestartScenario.pct(plan.maxShare()) + " of the node's clients in any 1 s",
                s.reconnected() > 0 && s.maxShare() <= plan.maxShare(),
                String.format(Locale.ROOT, "max %s (%d of %d clients, window from %.2f s)",
                        RestartScenario.pct(s.maxShare()), s.maxInAnySecond(), s.clients(), s.maxWindowFromMs() / 1000));
        double limit = lastDueMs + plan.lateMargin().toMillis();
        report.check(name + ": last client back within its reconnect window + "
                        + RestartScenario.fmtS(plan.lateMargin().toMillis()),
                s.reconnected() == s.clients() && s.reconnected() > 0 && s.lastMs() <= limit,
                String.format(Locale.ROOT, "last back at %.2f s; the last was due at %.2f s (%s), limit %.2f s",
                        s.lastMs() / 1000, lastDueMs / 1000, t.mode() == RestartMode.GRACEFUL
                                ? "its close + its retryMs hint" : plan.transport() == Transport.SSE
                                ? "its disconnect + at most 5 s of its stream's retry:"
                                : "its disconnect + the client's 5 s first-retry jitter",
                        limit / 1000));
        if (t.mode() == RestartMode.GRACEFUL && t.exitCode() >= 0) {
            report.check(name + ": drained node exited 0", t.exitCode() == 0, String.format(Locale.ROOT,
                    "exit %d %.1f s after SIGTERM", t.exitCode(), t.stoppedAfterMs() / 1000));
        }
    }

    /**
     * Reads nginx's connection log (complete now that the clients are closed) and reports, per
     * step, where the node's clients were at the signal and where they landed.
     */
    private void perNode(ManagedCluster cluster, Deadline deadline) throws IOException, InterruptedException {
        // nginx writes a subscription's line when the connection ends; the clients just closed.
        long stop = System.nanoTime() + deadline.cap(LOG_SETTLE).toNanos();
        long size = -1;
        while (System.nanoTime() - stop < 0) {
            long now = Files.exists(cluster.connectionLog()) ? Files.size(cluster.connectionLog()) : 0;
            if (now == size) {
                break;
            }
            size = now;
            Thread.sleep(500);
        }
        ConnectionLog hops = ConnectionLog.read(cluster.connectionLog(), ClusterRestartScenario::clientIndex);
        int n = cluster.size();
        List<String> headers = new ArrayList<>(List.of("#", "restarted", "on it at the signal (nginx)"));
        for (int k = 1; k <= n; k++) {
            headers.add("→ node-" + k);
        }
        headers.addAll(List.of("not seen again", "others disconnected"));
        FigureTable table = report.figures("Reconnects per node (from nginx's log: the node each client left and "
                + "the one it landed on)", headers, out);
        ArrayNode json = report.data().putArray("reconnectsPerNode");
        for (Step st : steps) {
            long signal = cluster.epochMillis(st.triggerNanos());
            long until = cluster.epochMillis(st.endNanos());
            int onIt = 0;
            int others = 0;
            int lost = 0;
            int[] landed = new int[n + 1];
            for (int client : st.affected()) {
                int from = cluster.nodeOfPort(hops.nodeAt(client, signal));
                if (from == st.node()) {
                    onIt++;
                } else {
                    others++; // disconnected although nginx had it on another node (or nowhere) at the signal
                }
                ConnectionLog.Hop next = hops.firstFrom(client, signal, until);
                int to = next == null ? -1 : cluster.nodeOfPort(next.nodePort());
                if (to < 1) {
                    lost++;
                } else {
                    landed[to]++;
                }
            }
            ObjectNode row = json.addObject();
            List<Figure> figures = new ArrayList<>(List.of(Figure.label(st.number()),
                    Figure.shown("node", st.node(), "node-" + st.node() + " (" + st.mode().label() + ")"),
                    Figure.of("onItAtSignal", onIt)));
            ObjectNode to = row.putObject("landedOn");
            for (int k = 1; k <= n; k++) {
                to.put("node-" + k, landed[k]);
                figures.add(Figure.label(landed[k]));
            }
            figures.add(Figure.of("notSeenAgain", lost));
            figures.add(Figure.of("disconnectedFromOtherNodes", others));
            table.row(row, figures.toArray(Figure[]::new));
            report.check("step " + st.number() + ": nginx had every disconnected client on node-" + st.node(),
                    others == 0 && onIt == st.affected().size(), String.format(Locale.ROOT,
                            "%d of %d disconnected clients were on node-%d at the signal; %d elsewhere or not in the "
                                    + "log", onIt, st.affected().size(), st.node(), others));
            // Landing back on the restarted node once it is ready is fine; not landing anywhere is not.
            report.check("step " + st.number() + ": nginx saw every client of node-" + st.node() + " land on a node",
                    lost == 0, String.format(Locale.ROOT, "%s; %d back on node-%d itself, %d not in the log",
                            landedText(landed, st.node()), landed[st.node()], st.node(), lost));
        }
        report.note(String.format(Locale.ROOT, "nginx's connection log: %d subscriptions logged, %d lines that were no "
                + "client's admitted subscription", hops.lines(), hops.skipped()));
    }

    private static String landedText(int[] landed, int node) {
        StringBuilder b = new StringBuilder();
        for (int k = 1; k < landed.length; k++) {
            if (k != node) {
                b.append(b.length() == 0 ? "" : ", ").append(landed[k]).append(" on node-").append(k);
            }
        }
        return b.toString();
    }
}
