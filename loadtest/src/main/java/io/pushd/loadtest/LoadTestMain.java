package io.pushd.loadtest;

import io.pushd.loadtest.bench.BenchCommand;
import io.pushd.loadtest.fanout.FanoutCommand;
import io.pushd.loadtest.publish.PublishCommand;
import io.pushd.loadtest.restart.RestartCommand;
import io.pushd.loadtest.storm.StormCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code java -jar push-loadtest.jar <scenario> [options]}. Each scenario is one command class in
 * its own package; adding one is adding its class to {@code subcommands} below. Shared pieces:
 * {@link RunOptions}, {@code server.ServerOptions}, {@code fleet.FleetOptions} (mixins),
 * {@code publish.TopicsApi} (the one HTTP client, over {@code publish.HttpPipeline}) with
 * {@code publish.Publisher} (paced, exactly once) and {@code publish.ClosedLoop} (as fast as
 * answered), and {@code report.Report} (checks and {@code report.Figure}s, written by
 * {@code report.ReportWriter}).
 *
 * <p>Exit codes: 0 every check passed, 1 a check failed (or the run broke), 2 usage error.
 */
@Command(name = "push-loadtest", mixinStandardHelpOptions = true, versionProvider = LoadTestMain.Version.class,
        showDefaultValues = true, sortOptions = false,
        description = "Load tests for the push server that check its promises and write report.json/report.html.",
        subcommands = {
                RestartCommand.class,
                FanoutCommand.class,
                StormCommand.class,
                BenchCommand.class,
                PublishCommand.class,
                CommandLine.HelpCommand.class
        })
public final class LoadTestMain implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs a command in this JVM and returns its exit code (what tests call). */
    public static int execute(String... args) {
        return new CommandLine(new LoadTestMain()).execute(args);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a scenario is required, e.g. restart");
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = LoadTestMain.class.getPackage().getImplementationVersion();
            return new String[] {"push-loadtest " + (v != null ? v : "(development build)")};
        }
    }
}
