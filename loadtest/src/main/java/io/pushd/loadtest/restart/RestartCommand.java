package io.pushd.loadtest.restart;

import io.pushd.client.Transport;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.auth.TokenOptions;
import io.pushd.loadtest.fleet.FleetOptions;
import io.pushd.loadtest.fleet.FleetSpec;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.ServerOptions;
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

    @Option(names = "--reconnect-timeout", paramLabel = "DURATION", defaultValue = "90s",
            converter = DurationConverter.class,
            description = "How long after a restart every client must have reconnected.")
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

    @Mixin
    ServerOptions server;

    @Mixin
    TokenOptions tokens;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        FleetSpec fleetSpec = fleet.spec();
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

    private ParameterException usage(String message) {
        return Commands.usage(spec, message);
    }
}
