package io.pushd.loadtest.publish;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.FigureTable;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.ProcessCpu;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Pipelined publishes as fast as they are answered through one or more running nodes at once
 * (each {@code --url} gets its own connections and publishers, every node writes to all topics),
 * and the CPU that other processes (Redis, the nodes) spend per event in the measured window. The
 * figure for "publish rate through N nodes" of a cluster: the sum over the nodes.
 */
@Command(name = "publish", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        description = "Publishes pipelined, as fast as answered, through every --url at once (running servers or "
                + "cluster nodes) over --topics topics, and reports acknowledged events/s per node and in all, ack "
                + "latency, the load average, and the CPU per event of every --cpu-pid (e.g. redis-server).",
        footer = "Exit code: 0 every publish acknowledged with 201, 1 otherwise, 2 usage error.")
public final class PublishCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(PublishCommand.class);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final String BODY = "{\"bench\":true,\"pad\":\"0123456789abcdef0123456789abcdef\"}";

    @Spec
    CommandSpec spec;

    @Option(names = "--url", paramLabel = "URL", required = true,
            description = "A running server (loopback only), e.g. http://127.0.0.1:8081; repeat it for each node.")
    List<URI> urls;

    @Option(names = "--topics", paramLabel = "N", defaultValue = "10000",
            description = "Topics, round robin; every node publishes to all of them.")
    int topics;

    @Option(names = "--connections", paramLabel = "N", defaultValue = "16",
            description = "Kept-alive connections per node.")
    int connections;

    @Option(names = "--depth", paramLabel = "N", defaultValue = "64",
            description = "Requests pipelined on each connection (the server queues at most 256).")
    int depth;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "3s", converter = DurationConverter.class,
            description = "Publishing before the measurement (not counted).")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s", converter = DurationConverter.class,
            description = "Measured publishing time.")
    Duration duration;

    @Option(names = "--cpu-pid", paramLabel = "PID",
            description = "A process whose CPU (utime + stime from /proc/PID/stat) is measured over the window and "
                    + "reported per event, e.g. redis-server's; repeatable.")
    List<Long> cpuPids = new ArrayList<>();

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        if (topics < 1 || topics > 1_000_000) {
            throw Commands.usage(spec, "--topics must be 1-1000000: " + topics);
        }
        if (connections < 1 || connections > 1024) {
            throw Commands.usage(spec, "--connections must be 1-1024: " + connections);
        }
        if (depth < 1 || depth > 256) {
            throw Commands.usage(spec, "--depth must be 1-256 (the server queues at most 256): " + depth);
        }
        if (duration.isZero() || duration.isNegative()) {
            throw Commands.usage(spec, "--duration must be > 0: " + duration);
        }
        List<URI> nodes = urls.stream().map(u -> Commands.loopbackUrl(spec, u)).toList();
        for (long pid : cpuPids) {
            if (ProcessCpu.cpuNanos(pid).isEmpty()) {
                throw Commands.usage(spec, "--cpu-pid " + pid + ": no such process (or /proc/" + pid
                        + "/stat not readable)");
            }
        }
        return new Run(nodes, Commands.commandLine(spec), System.out).run() ? 0 : 1;
    }

    /** The 1-minute load average from /proc/loadavg, or -1 where there is none. */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private final class Run {

        private final List<URI> nodes;
        private final PrintStream out;
        private final Report report;
        private final FigureTable figures;
        private final String runId = ReportedRun.newRunId();

        Run(List<URI> nodes, String commandLine, PrintStream out) {
            this.nodes = nodes;
            this.out = out;
            this.report = new Report("publish", String.format(Locale.ROOT,
                    "Pipelined publish rate through %d node(s)", nodes.size()), commandLine);
            this.figures = report.figures("Figures", List.of("what", "value"), out);
        }

        boolean run() throws Exception {
            Deadline deadline = Deadline.in(run.timeout());
            ReportedRun.commonSettings(report.setting("nodes", nodes.stream().map(URI::toString).toList().toString())
                    .setting("topics", topics).setting("connections", connections).setting("depth", depth)
                    .setting("warmupMs", warmup.toMillis()).setting("durationMs", duration.toMillis()), run, runId);
            return ReportedRun.run(report, run, deadline, out, log, this::execute);
        }

        private void execute(Deadline deadline) throws Exception {
            List<String> names = TopicsApi.topicNames("pub-" + runId, topics);
            List<TopicsApi> apis = new ArrayList<>();
            List<ClosedLoop> loops = new ArrayList<>();
            try {
                for (URI node : nodes) {
                    TopicsApi api = new TopicsApi(node.getHost(), node.getPort(), connections, depth, REQUEST_TIMEOUT);
                    apis.add(api);
                    loops.add(new ClosedLoop(api, names, connections * depth, i -> BODY, Long.MAX_VALUE));
                }
                out.printf(Locale.ROOT, "publishing through %d node(s), %d connections x %d pipelined each, "
                                + "%,d topics: %.1f s warm-up, %.1f s measured%n", nodes.size(), connections, depth,
                        topics, warmup.toMillis() / 1000.0, duration.toMillis() / 1000.0);
                loops.forEach(ClosedLoop::start);
                deadline.sleep(warmup);
                loops.forEach(ClosedLoop::resetWindow);
                double load0 = loadAverage();
                List<Optional<ProcessCpu.Sample>> cpu0 = cpuPids.stream()
                        .map(p -> ProcessCpu.Sample.of(OptionalLong.of(p))).toList();
                long t0 = System.nanoTime();
                deadline.sleep(duration);
                long[] acked = loops.stream().mapToLong(ClosedLoop::windowAcked).toArray();
                long t1 = System.nanoTime();
                List<Optional<ProcessCpu.Sample>> cpu1 = cpuPids.stream()
                        .map(p -> ProcessCpu.Sample.of(OptionalLong.of(p))).toList();
                double load1 = loadAverage();
                Histogram latency = new Histogram(3);
                loops.forEach(l -> latency.add(l.latency()));
                for (ClosedLoop l : loops) {
                    l.stopAndAwait(Duration.ofSeconds(15));
                }
                double seconds = (t1 - t0) / 1e9;
                long total = 0;
                ArrayNode perNode = report.data().putArray("nodes");
                for (int i = 0; i < nodes.size(); i++) {
                    total += acked[i];
                    double perS = acked[i] / seconds;
                    figures.row(perNode.addObject().put("url", nodes.get(i).toString()),
                            Figure.label("acknowledged events/s through " + nodes.get(i)),
                            Figure.fmt("eventsPerSecond", perS, "%,.0f"), Figure.json("acknowledged", acked[i]));
                }
                ObjectNode json = report.data().putObject("publish");
                LatencySummary ack = LatencySummary.of("publish acknowledged (request sent → 201)", latency, 1000);
                report.latency(ack);
                figures.row(json, Figure.label(String.format(Locale.ROOT, "acknowledged events/s, %d node(s) in all",
                                nodes.size())), Figure.fmt("eventsPerSecond", total / seconds, "%,.0f"),
                        Figure.json("acknowledged", total), Figure.json("windowSeconds", seconds))
                        .row(json, Figure.label("ack latency p50 / p99 ms"),
                                Figure.fmt("ackLatencyP50Ms", ack.p50Ms(), "%.2f"),
                                Figure.fmt("ackLatencyP99Ms", ack.p99Ms(), "%.2f"))
                        .row(json, Figure.label("load average (1 min) at the window's start / end"),
                                Figure.fmt("loadAverageStart", load0, "%.2f"),
                                Figure.fmt("loadAverageEnd", load1, "%.2f"));
                ArrayNode cpus = json.putArray("cpu");
                for (int i = 0; i < cpuPids.size(); i++) {
                    double percent = ProcessCpu.Sample.percentOfOneCore(cpu0.get(i), cpu1.get(i));
                    double cpuNanos = percent / 100 * (t1 - t0);
                    double microsPerEvent = total == 0 ? -1 : cpuNanos / 1000 / total;
                    figures.row(cpus.addObject().put("pid", cpuPids.get(i)),
                            Figure.label("CPU of pid " + cpuPids.get(i) + ": % of one core / µs per event"),
                            Figure.fmt("percentOfOneCore", percent, "%.1f"),
                            Figure.fmt("microsPerEvent", microsPerEvent, "%.2f"));
                }
                long failures = loops.stream().mapToLong(ClosedLoop::failures).sum();
                String first = loops.stream().map(ClosedLoop::firstFailure).filter(f -> f != null).findFirst()
                        .orElse(null);
                report.check("every publish acknowledged with 201", failures == 0 && total > 0,
                        String.format(Locale.ROOT, "%,d acknowledged in the window, %,d failed (warm-up included)%s", total, failures,
                                first == null ? "" : "; first: " + first));
            } finally {
                apis.forEach(TopicsApi::close);
            }
        }
    }
}
