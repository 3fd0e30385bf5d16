package io.pushd.loadtest;

import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** Options every scenario has: where the report goes and the hard time bound. A picocli mixin. */
public final class RunOptions {

    @Option(names = "--report-dir", paramLabel = "DIR", defaultValue = "loadtest-report",
            description = "Where report.json, report.html and the server logs go.")
    Path reportDir;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "300s", converter = DurationConverter.class,
            description = "Hard bound of the whole run; when reached the run fails and still reports.")
    Duration timeout;

    public Path reportDir() {
        return reportDir;
    }

    public Duration timeout() {
        return timeout;
    }
}
