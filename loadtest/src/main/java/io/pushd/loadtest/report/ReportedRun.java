package io.pushd.loadtest.report;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.RunOptions;
import java.io.PrintStream;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import picocli.CommandLine.ParameterException;

/**
 * The frame every scenario runs in: the body runs under the {@code --timeout} deadline; whatever
 * happens, the report is finished and written to {@code --report-dir}; then the summary is printed.
 */
public final class ReportedRun {

    /** A scenario's steps. */
    @FunctionalInterface
    public interface Body {
        void execute(Deadline deadline) throws Exception;
    }

    private ReportedRun() {
    }

    /** A fresh run id (base 36), so that each run uses topics nobody else publishes to. */
    public static String newRunId() {
        return Long.toString(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 41), 36);
    }

    /** The settings every report ends with: the timeout, the run id and the machine. */
    public static Report commonSettings(Report report, RunOptions run, String runId) {
        return report.setting("timeoutMs", run.timeout().toMillis())
                .setting("runId", runId)
                .setting("cores", Runtime.getRuntime().availableProcessors())
                .setting("java", System.getProperty("java.version"));
    }

    /**
     * Runs {@code body}; a deadline reached or a runtime failure becomes a failed check. Writes the
     * report, prints the summary and where the report is; true when every check passed.
     */
    public static boolean run(Report report, RunOptions run, Deadline deadline, PrintStream out, Logger log,
                              Body body) throws Exception {
        return run(report, run, deadline, out, log, false, body);
    }

    /**
     * As {@link #run(Report, RunOptions, Deadline, PrintStream, Logger, Body)}; with
     * {@code usageErrorsPropagate} a usage error found late is thrown on (after the report is written)
     * instead of failing the run.
     */
    public static boolean run(Report report, RunOptions run, Deadline deadline, PrintStream out, Logger log,
                              boolean usageErrorsPropagate, Body body) throws Exception {
        try {
            body.execute(deadline);
        } catch (ParameterException e) {
            if (usageErrorsPropagate) {
                throw e;
            }
            failed(report, log, e);
        } catch (Deadline.Expired e) {
            report.check("finished within --timeout", false, e.getMessage());
        } catch (RuntimeException e) {
            failed(report, log, e);
        } finally {
            report.finish();
            ReportWriter.write(report, run.reportDir());
        }
        ReportWriter.printSummary(report, out);
        out.println("  report: " + run.reportDir().toAbsolutePath().normalize().resolve(ReportWriter.HTML_FILE));
        return report.passed();
    }

    private static void failed(Report report, Logger log, RuntimeException e) {
        log.error("the run broke", e);
        report.check("run completed", false, e.toString());
    }
}
