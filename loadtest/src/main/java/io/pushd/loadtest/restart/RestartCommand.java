package io.pushd.loadtest.restart;

import io.pushd.client.Transport;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.auth.TokenOptions;
import io.pushd.loadtest.cluster.Binaries;
import io.pushd.loadtest.fleet.FleetOptions;
import io.pushd.loadtest.fleet.FleetSpec;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.ServerOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code restart}: the promise "restart the server with 1,000 clients connected; their reconnects
 * spread over at least 5 seconds; each client then holds every event exactly once", measured.
 */
@Command(name = "restart", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = {
                "Connects clients, publishes at a steady rate, restarts the server while they are connected, "
                        + "then checks that the reconnects were spread out and that every client holds every "
                        + "acknowledged event exactly once and in order.",
                "Exit code: 0 all checks passed, 1 a check failed, 2 usage error."
        })
public final class RestartCommand implements Callable<Integer> {

    /** How a restart is performed; {@code both} alternates graceful and crash. */
    enum Mode {
        graceful, crash, both
    }

    /** The clients' transport, as the command line writes it. */
    enum TransportOption {
        websocket(Transport.WEBSOCKET), sse(Transport.SSE);

        final Transport transport;

        TransportOption(Transport transport) {
            this.transport = transport;
        }
    }

    @Spec
    CommandSpec spec;

    @Mixin
    FleetOptions fleet;

    @Option(names = "--transport", paramLabel = "TRANSPORT", defaultValue = "websocket",
            description = "How the clients connect: websocket (GET /v1/live) or sse (GET /v1/sse, server-sent events; "
                    + "the close event and retry: are their hints).")
    TransportOption transport;

    @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "200",
            description = "Events published per second over all topics.")
    double rate;

    @Option(names = "--mode", paramLabel = "MODE", defaultValue = "graceful",
            description = "graceful (SIGTERM: drain with 1012 + retryMs), crash (SIGKILL: no hints) or both "
                    + "(graceful, then crash).")
    Mode mode;

    @Option(names = "--restarts", paramLabel = "N",
            description = "Restarts to perform (default: 1, with --mode both: 2). With both they alternate.")
    Integer restarts;

    @Option(names = "--steady", paramLabel = "DURATION", defaultValue = "3s", converter = DurationConverter.class,
            description = "Steady publishing before the first restart and after each wave of reconnects.")
    Duration steady;

    // 120 s: a client whose attempt fails as the server becomes ready (a connect and a handshake
    // of 10 s each on a loaded machine) then waits up to its maxDelay (60 s) before the next one,
    // which may take as long again; 90 s was too short for that under CI load (a client back at
    // 75 s after a response timeout, another not back at 90 s).
    @Option(names = "--reconnect-timeout", paramLabel = "DURATION", defaultValue = "120s",
            converter = DurationConverter.class,
            description = "How long every client has to reconnect once the restarted server is ready "
                    + "(a cluster: once the node was signalled, its clients going to the others).")
    Duration reconnectTimeout;

    @Option(names = "--catch-up-timeout", paramLabel = "DURATION", defaultValue = "60s",
            converter = DurationConverter.class,
            description = "How long after publishing stopped every client must hold the head.")
    Duration catchUpTimeout;

    @Option(names = "--min-spread", paramLabel = "DURATION", defaultValue = "5s", converter = DurationConverter.class,
            description = "Pass only if first-to-last reconnect of each restart is at least this.")
    Duration minSpread;

    @Option(names = "--max-share", paramLabel = "PERCENT", defaultValue = "30",
            description = "Pass only if no 1 s window holds more than this %% of the clients.")
    double maxSharePercent;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "1",
            description = "1: one server. 2-9: a cluster on this host: redis-server (AOF on), N server nodes "
                    + "sharing it (cluster.redisUri), and nginx in front (round robin); clients and the publisher "
                    + "go through nginx. Then a rolling graceful restart of every node, one at a time, and a "
                    + "kill -9 of one node (--mode graceful: only the rolling restart, crash: only the kill; "
                    + "default both). The checks apply to each node's clients.")
    int nodes;

    @Option(names = "--crash-node", paramLabel = "K", defaultValue = "1",
            description = "With --nodes: the node (1..N) the crash phase kills.")
    int crashNode;

    @Option(names = "--late-margin", paramLabel = "DURATION", defaultValue = "3s", converter = DurationConverter.class,
            description = "With --nodes: pass only if the last client of a node is back at most this long after "
                    + "it was due (its close + its retryMs hint; after a crash its disconnect + the client's 5 s "
                    + "first-retry jitter).")
    Duration lateMargin;

    @Option(names = "--min-spread-crash", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With --nodes: --min-spread for the crash phase (default: 4.5s, with --transport sse 3.5s). "
                    + "No node hints after a kill -9 and the other nodes take the clients at once, so only the "
                    + "clients' own delay spreads them: a WebSocket client's jitter is uniform in [0, 5 s], whose "
                    + "first-to-last span is below 5 s by construction (about 5 s x (n-1)/(n+1) for n clients); an "
                    + "SSE client waits its stream's retry: (1 s to drain.minWindow), a span below 4 s.")
    Duration minSpreadCrash;

    @Option(names = "--redis-server", paramLabel = "PATH",
            description = "With --nodes: the redis-server binary (default: /usr/bin/redis-server or on PATH).")
    Path redisServer;

    @Option(names = "--nginx", paramLabel = "PATH",
            description = "With --nodes: the nginx binary (default: /usr/sbin/nginx or on PATH).")
    Path nginx;

    @Mixin
    ServerOptions server;

    @Mixin
    TokenOptions tokens;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        FleetSpec fleetSpec = fleet.spec();
        if (nodes != 1) {
            return cluster(fleetSpec);
        }
        RestartScenario.Plan plan = plan(fleetSpec);
        server.validate(true);
        tokens.validate();
        return new RestartScenario(plan, server, run, Commands.commandLine(spec), System.out)
                .withTokens(tokens.mode()).run() ? 0 : 1;
    }

    private RestartScenario.Plan plan(FleetSpec fleetSpec) {
        Commands.checkRate(spec, rate);
        int n = restarts != null ? restarts : (mode == Mode.both ? 2 : 1);
        if (n < 1 || n > 100) {
            throw usage("--restarts must be 1-100: " + n);
        }
        if (!(maxSharePercent > 0 && maxSharePercent <= 100)) {
            throw usage("--max-share must be a percentage in (0, 100]: " + maxSharePercent);
        }
        List<RestartMode> modes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            modes.add(switch (mode) {
                case graceful -> RestartMode.GRACEFUL;
                case crash -> RestartMode.CRASH;
                case both -> i % 2 == 0 ? RestartMode.GRACEFUL : RestartMode.CRASH;
            });
        }
        return new RestartScenario.Plan(fleetSpec, transport.transport, rate, modes, steady, reconnectTimeout,
                catchUpTimeout, minSpread,
                maxSharePercent / 100.0);
    }

    private int cluster(FleetSpec fleetSpec) throws Exception {
        if (nodes < 2 || nodes > 9) {
            throw usage("--nodes must be 1-9: " + nodes);
        }
        if (crashNode < 1 || crashNode > nodes) {
            throw usage("--crash-node must be 1-" + nodes + " (a node of --nodes " + nodes + "): " + crashNode);
        }
        if (server.external()) {
            throw usage("--nodes starts its own nodes, Redis and nginx: it cannot be combined with --url");
        }
        if (restarts != null) {
            throw usage("--nodes restarts every node once (rolling) and kills one: --restarts does not apply");
        }
        if (!fleetSpec.sourceAddresses().isEmpty()) {
            throw usage("--nodes gives every client its own loopback source address (so nginx's log names it): "
                    + "--source-addresses does not apply");
        }
        server.validate(true); // the jar exists; --restart-command (for --url) does not apply
        if (fleetSpec.clients() > ClusterRestartScenario.MAX_CLIENTS) {
            throw usage("--nodes supports at most " + ClusterRestartScenario.MAX_CLIENTS + " clients (one source "
                    + "address each): " + fleetSpec.clients());
        }
        if (lateMargin.isNegative()) {
            throw usage("--late-margin must be >= 0: " + lateMargin);
        }
        Commands.checkRate(spec, rate);
        if (!(maxSharePercent > 0 && maxSharePercent <= 100)) {
            throw usage("--max-share must be a percentage in (0, 100]: " + maxSharePercent);
        }
        Path redis = Binaries.find(redisServer, "redis-server").orElseThrow(() -> usage(redisServer != null
                ? "--redis-server " + redisServer + " is not an executable file"
                : "redis-server not found (/usr/bin, /usr/local/bin, PATH): install it (Debian: apt-get install "
                + "redis-server) or pass --redis-server PATH"));
        Path nginxBinary = Binaries.find(nginx, "nginx").orElseThrow(() -> usage(nginx != null
                ? "--nginx " + nginx + " is not an executable file"
                : "nginx not found (/usr/sbin, PATH): install it (Debian: apt-get install nginx-light) or pass "
                + "--nginx PATH"));
        tokens.validate();
        boolean modeGiven = spec.commandLine().getParseResult().hasMatchedOption("--mode");
        Mode m = modeGiven ? mode : Mode.both;
        ClusterRestartScenario.Plan plan = new ClusterRestartScenario.Plan(fleetSpec, transport.transport, rate, nodes,
                m != Mode.crash, m != Mode.graceful, crashNode, steady, reconnectTimeout, catchUpTimeout, minSpread,
                minSpreadCrash != null ? minSpreadCrash : Duration.ofMillis(transport == TransportOption.sse ? 3_500
                        : 4_500), maxSharePercent / 100.0, lateMargin);
        ClusterRestartScenario.Machines machines = new ClusterRestartScenario.Machines(server.jar(), redis,
                nginxBinary, server.sets());
        return new ClusterRestartScenario(plan, machines, run, Commands.commandLine(spec), System.out)
                .withTokens(tokens.mode()).run() ? 0 : 1;
    }

    private ParameterException usage(String message) {
        return Commands.usage(spec, message);
    }
}
