package io.pushd.loadtest;

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
}
