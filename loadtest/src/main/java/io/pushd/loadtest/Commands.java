package io.pushd.loadtest;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** What the scenario commands share when they check their options and name themselves in the report. */
public final class Commands {

    private Commands() {
    }

    /** A usage error (exit code 2) of the command {@code spec} describes. */
    public static ParameterException usage(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** The {@code --rate} bound shared by the publishing scenarios: {@code (0, 100000]} events/s. */
    public static void checkRate(CommandSpec spec, double rate) {
        if (!(rate > 0 && rate <= 100_000)) {
            throw usage(spec, "--rate must be > 0 and <= 100000: " + rate);
        }
    }

    /** The command line as the report shows it: {@code push-loadtest} and the arguments as given. */
    public static String commandLine(CommandSpec spec) {
        return "push-loadtest " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
    }

    /** {@code u} as {@code http://host:port} when it names a loopback server; else a usage error. */
    public static URI loopbackUrl(CommandSpec spec, URI u) {
        if (!"http".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 1) {
            throw usage(spec, "--url must look like http://127.0.0.1:8080 (scheme http, host and port): " + u);
        }
        try {
            // Loopback only: a load test must never be pointed at someone else's server by accident.
            for (InetAddress a : InetAddress.getAllByName(u.getHost())) {
                if (!a.isLoopbackAddress()) {
                    throw usage(spec, "--url must be a loopback address, not " + u.getHost() + " ("
                            + a.getHostAddress() + ")");
                }
            }
        } catch (UnknownHostException e) {
            throw usage(spec, "--url: unknown host " + u.getHost());
        }
        return URI.create("http://" + u.getHost() + ":" + u.getPort());
    }
}
