package io.pushd.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pushd.client.ClientResources;
import io.pushd.client.PushClient;
import io.pushd.client.PushClientOptions;
import io.pushd.client.PushListener;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.OptionDefaults;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.publish.ClosedLoop;
import io.pushd.loadtest.publish.TopicsApi;
import io.pushd.loadtest.publish.TopicsApi.TopicInfo;
import io.pushd.loadtest.report.Figure;
import io.pushd.loadtest.report.FigureTable;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.server.ProcessCpu;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench}: the server's throughput figures in one run. (a) publish rate: concurrent HTTP
 * publishers in a closed loop (next request when the previous one is acknowledged); (b) replay
 * rate: one client reads every kept event of the fullest topic from {@code <epoch>-0}; (c) start-up
 * time: optionally fill the store to N events, stop the server with SIGTERM and start it on the
 * same data directory, timing process start to {@code /readyz} 200 and reading the server's own
 * "N events recovered in M ms" line.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, showDefaultValues = true, sortOptions = false,
        defaultValueProvider = BenchCommand.Defaults.class,
        description = {
                "Measures (a) acknowledged publishes/s and ack latency with concurrent closed-loop HTTP publishers, "
                        + "(b) replay rate of all kept events of one topic to one client, (c) server start-up time "
                        + "(process start to /readyz 200, and the server's own recovery figure) with the kept events, "
                        + "after an optional fill to --fill events.",
                "Exit code: 0 all figures measured and checked (counts, order, recovery), 1 otherwise, 2 usage error."
        })
public final class BenchCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(BenchCommand.class);
    private static final Pattern RECOVERED = Pattern.compile("(\\d+) events recovered in (\\d+) ms");
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    /** Requests pipelined per fill connection (the server queues at most 256). */
    private static final int FILL_DEPTH = 64;
    private static final String FILL_BODY = "{\"fill\":true,\"pad\":\"0123456789abcdef0123456789abcdef\"}";

    @Spec
    CommandSpec spec;

    @Option(names = "--publishers", paramLabel = "N", defaultValue = "16",
            description = "(a) Concurrent publishers, each sending its next event when the previous one is acknowledged.")
    int publishers;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "10s", converter = DurationConverter.class,
            description = "(a) Measured publishing time.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "2s", converter = DurationConverter.class,
            description = "(a) Publishing before the measurement (JIT warm-up, not counted).")
    Duration warmup;

    @Option(names = "--topics", paramLabel = "N", defaultValue = "10",
            description = "(a) Topics the publishers write to, round robin.")
    int topics;

    @Option(names = "--replay-events", paramLabel = "N", defaultValue = "100000",
            description = "(b) Events the replayed topic holds (topped up through the API; at most the retention count).")
    long replayEvents;

    @Option(names = "--fill", paramLabel = "N", defaultValue = "0",
            description = "(c) Before the restart, publish until the store keeps at least N events (e.g. 1000000).")
    long fill;

    @Option(names = "--fill-topics", paramLabel = "N", defaultValue = "10000",
            description = "(c) Topics the fill spreads over.")
    int fillTopics;

    @Option(names = "--fill-publishers", paramLabel = "N", defaultValue = "64",
            description = "(c) Connections of the fill, each sending pipelined batches of publishes.")
    int fillPublishers;

    @Option(names = "--replay-timeout", paramLabel = "DURATION", defaultValue = "120s",
            converter = DurationConverter.class, description = "(b) Bound of the replay.")
    Duration replayTimeout;

    @Mixin
    ServerOptions server;

    @Mixin
    RunOptions run;

    /** A fill of a million events takes minutes on a small machine: a longer overall bound. */
    public static final class Defaults extends OptionDefaults {
        public Defaults() {
            super(Map.of("--timeout", "900s"));
        }
    }

    @Override
    public Integer call() throws Exception {
        if (publishers < 1 || publishers > 1024) {
            throw usage("--publishers must be 1-1024: " + publishers);
        }
        if (topics < 1 || topics > 10_000) {
            throw usage("--topics must be 1-10000: " + topics);
        }
        if (fill < 0 || fill > 100_000_000) {
            throw usage("--fill must be 0-100000000: " + fill);
        }
        if (fillTopics < 1 || fillTopics > 1_000_000) {
            throw usage("--fill-topics must be 1-1000000: " + fillTopics);
        }
        if (fillPublishers < 1 || fillPublishers > 1024) {
            throw usage("--fill-publishers must be 1-1024: " + fillPublishers);
        }
        server.validate(true);
        return new Run(Commands.commandLine(spec), System.out).run() ? 0 : 1;
    }

    private ParameterException usage(String message) {
        return Commands.usage(spec, message);
    }

    private final class Run {

        private final PrintStream out;
        private final Report report;
        private final String runId = ReportedRun.newRunId();
        private final FigureTable figures;

        Run(String commandLine, PrintStream out) {
            this.out = out;
            this.report = new Report("bench", "Bench: publish rate, replay rate, start-up time"
                    + (fill > 0 ? String.format(Locale.ROOT, " with %,d kept events", fill) : ""), commandLine);
            this.figures = report.figures("Figures", List.of("what", "value"), out);
        }

        boolean run() throws Exception {
            Deadline deadline = Deadline.in(run.timeout());
            ReportedRun.commonSettings(report.setting("publishers", publishers)
                    .setting("durationMs", duration.toMillis())
                    .setting("warmupMs", warmup.toMillis())
                    .setting("topics", topics)
                    .setting("fill", fill)
                    .setting("fillTopics", fillTopics)
                    .setting("fillPublishers", fillPublishers), run, runId);
            return ReportedRun.run(report, run, deadline, out, log, this::execute);
        }

        private void execute(Deadline deadline) throws Exception {
            List<String> benchTopics = TopicsApi.topicNames("bn-" + runId, topics);
            // (a) is closed-loop: one connection per publisher, one request at a time on each
            try (ServerControl srv = server.open(run.reportDir(), deadline, true);
                 TopicsApi api = new TopicsApi(srv.host(), srv.port(), publishers, 1, REQUEST_TIMEOUT)) {
                report.setting("server", srv.describe());
                out.println("server: " + srv.describe());
                ClosedLoop a = publishRate(srv, api, benchTopics, deadline);
                TopicInfo info = replayTopic(srv, api, benchTopics, a, deadline);
                replay(srv, info, deadline);

                // ---- (c) start-up time with the kept events
                long kept = 0;
                for (String t : benchTopics) {
                    kept += api.topic(t).kept();
                }
                long fillAcked = fill > kept ? fillStore(srv, fill - kept, deadline) : 0;
                startup(srv, api, info, kept + fillAcked, deadline);
            }
        }

        /** (a): closed-loop publishers, a warm-up, then the measured window. */
        private ClosedLoop publishRate(ServerControl srv, TopicsApi api, List<String> benchTopics, Deadline deadline)
                throws InterruptedException {
            OptionalLong pid = ProcessCpu.childServerPid(srv);
            out.printf(Locale.ROOT, "(a) %d closed-loop publishers on %d topics: %.1f s warm-up, %.1f s measured%n",
                    publishers, topics, warmup.toMillis() / 1000.0, duration.toMillis() / 1000.0);
            ClosedLoop a = new ClosedLoop(api, benchTopics, publishers,
                    n -> "{\"n\":" + n + ",\"src\":\"a\",\"v\":\"abcdefghij\"}", Long.MAX_VALUE);
            a.start();
            deadline.sleep(warmup);
            a.resetWindow();
            Optional<ProcessCpu.Sample> cpu0 = ProcessCpu.Sample.of(pid);
            long t0 = System.nanoTime();
            deadline.sleep(duration);
            long ackedInWindow = a.windowAcked();
            long t1 = System.nanoTime();
            Optional<ProcessCpu.Sample> cpu1 = ProcessCpu.Sample.of(pid);
            LatencySummary ack = LatencySummary.of("(a) publish acknowledged (request sent → 201)", a.latency(), 1000);
            a.stopAndAwait(Duration.ofSeconds(15));
            double windowS = (t1 - t0) / 1e9;
            double perS = ackedInWindow / windowS;
            double cpu = ProcessCpu.Sample.percentOfOneCore(cpu0, cpu1);
            report.latency(ack);
            report.check("(a) every publish acknowledged with 201", a.failures() == 0 && ackedInWindow > 0,
                    String.format(Locale.ROOT, "%,d acknowledged in all, %,d failed%s", a.acked(), a.failures(),
                            a.firstFailure() == null ? "" : "; first: " + a.firstFailure()));
            ObjectNode json = report.data().putObject("publish");
            figures.row(json, Figure.label("(a) acknowledged publishes/s"),
                            Figure.shown("acknowledgedPerSecond", perS, Figure.round1(perS)),
                            Figure.json("publishers", publishers), Figure.json("windowSeconds", windowS),
                            Figure.json("acknowledgedInWindow", ackedInWindow))
                    .row(json, Figure.label("(a) ack latency p50 / p99 ms"),
                            Figure.fmt("ackLatencyP50Ms", ack.p50Ms(), "%.2f"),
                            Figure.fmt("ackLatencyP99Ms", ack.p99Ms(), "%.2f"),
                            Figure.json("ackLatencyP90Ms", ack.p90Ms()), Figure.json("ackLatencyMaxMs", ack.maxMs()))
                    .row(json, Figure.label("(a) server CPU, % of one core"),
                            Figure.shown("serverCpuPercentOfOneCore", cpu, cpu < 0 ? "n/a" : Figure.round1(cpu)),
                            Figure.json("failures", a.failures()), Figure.json("totalAcknowledged", a.acked()));
            return a;
        }

        /** (b): the topic (a) wrote most to, topped up so that its replay measures more than the connect. */
        private TopicInfo replayTopic(ServerControl srv, TopicsApi api, List<String> benchTopics, ClosedLoop a,
                                      Deadline deadline) throws InterruptedException {
            String fullest = benchTopics.get(0);
            long most = -1;
            for (int i = 0; i < benchTopics.size(); i++) {
                if (a.perTopic(i) > most) {
                    most = a.perTopic(i);
                    fullest = benchTopics.get(i);
                }
            }
            TopicInfo before = api.topic(fullest);
            if (replayEvents > before.kept()) {
                long add = Math.min(replayEvents, 100_000) - before.kept();
                out.printf(Locale.ROOT, "(b) adding %,d events to %s for the replay%n", add, fullest);
                fillLoop(srv, List.of(fullest), 8, add, deadline, false);
                deadline.check("filling the replay topic");
            }
            return api.topic(fullest);
        }

        /** Publishes {@code n} events over {@code connections} pipelined connections; returns when all are answered. */
        private ClosedLoop fillLoop(ServerControl srv, List<String> names, int connections, long n, Deadline deadline,
                                    boolean showProgress) throws InterruptedException {
            try (TopicsApi fillApi = new TopicsApi(srv.host(), srv.port(), connections, FILL_DEPTH, REQUEST_TIMEOUT)) {
                ClosedLoop loop = new ClosedLoop(fillApi, names, connections * FILL_DEPTH, i -> FILL_BODY, n);
                Thread progress = showProgress ? progress(loop, n) : null;
                loop.start();
                try {
                    loop.awaitFinished(deadline.remaining());
                } finally {
                    if (progress != null) {
                        progress.interrupt();
                    }
                }
                return loop;
            }
        }

        private void replay(ServerControl srv, TopicInfo info, Deadline deadline) throws InterruptedException {
            long expected = info.kept();
            out.printf(Locale.ROOT, "(b) replaying %,d kept events of %s (%s..%s) to one client%n", expected,
                    info.topic(), info.oldest(), info.head());
            ReplayListener listener = new ReplayListener(info.oldest() == null ? 1 : info.oldest().seq(), expected);
            long start;
            boolean done;
            try (ClientResources resources = ClientResources.create(1)) {
                PushClientOptions options = PushClientOptions.builder(srv.host(), srv.port())
                        .topic(info.topic(), new EventId(info.epoch(), 0))
                        .build();
                start = System.nanoTime();
                PushClient client = resources.newClient(options, listener).start();
                done = listener.done.await(deadline.cap(replayTimeout).toMillis(), TimeUnit.MILLISECONDS);
                client.close();
                deadline.check("replaying");
            }
            long count = listener.count.get();
            double seconds = ((done ? listener.lastNanos : System.nanoTime()) - start) / 1e9;
            double firstS = listener.firstNanos == 0 ? -1 : (listener.firstNanos - start) / 1e9;
            double perS = count / seconds;
            boolean ok = done && count == expected && listener.outOfOrder.get() == 0 && listener.resets.get() == 0;
            report.check("(b) replay delivered every kept event once, in order", ok, String.format(Locale.ROOT,
                    "%,d of %,d events in %.3f s, %d out of order, %d resets%s", count, expected,
                    seconds, listener.outOfOrder.get(), listener.resets.get(),
                    listener.firstProblem == null ? "" : "; first: " + listener.firstProblem));
            ObjectNode json = report.data().putObject("replay").put("topic", info.topic());
            figures.row(json, Figure.label("(b) replay events/s (subscribe from <epoch>-0 to last kept event)"),
                            Figure.shown("eventsPerSecond", perS, Figure.round1(perS)),
                            Figure.json("keptEvents", expected))
                    .row(json, Figure.label("(b) replayed events / seconds"), Figure.fmt("received", count, "%,d"),
                            Figure.shown("seconds", seconds, String.format(Locale.ROOT,
                                    "%.3f s (first event after %.3f s)", seconds, firstS)),
                            Figure.json("firstEventSeconds", firstS),
                            Figure.json("outOfOrder", listener.outOfOrder.get()),
                            Figure.json("resets", listener.resets.get()), Figure.json("complete", ok));
        }

        private long fillStore(ServerControl srv, long n, Deadline deadline) throws InterruptedException {
            List<String> names = TopicsApi.topicNames("fill-" + runId, fillTopics);
            out.printf(Locale.ROOT, "(c) filling %,d events over %,d topics with %d publishers%n", n, fillTopics,
                    fillPublishers);
            long f0 = System.nanoTime();
            ClosedLoop loop = fillLoop(srv, names, fillPublishers, n, deadline, true);
            deadline.check("filling the store");
            double s = (System.nanoTime() - f0) / 1e9;
            long acked = loop.acked();
            report.check("(c) fill: every publish acknowledged with 201", loop.failures() == 0 && acked >= n,
                    String.format(Locale.ROOT, "%,d acknowledged (target %,d), %,d failed%s", acked, n,
                            loop.failures(), loop.firstFailure() == null ? "" : "; first: " + loop.firstFailure()));
            figures.row(report.data().putObject("fill"), Figure.label("(c) fill: events / seconds / events/s"),
                    Figure.fmt("events", acked, "%,d"), Figure.json("topics", fillTopics),
                    Figure.json("publishers", fillPublishers), Figure.fmt("seconds", s, "%.1f s"),
                    Figure.fmt("eventsPerSecond", acked / s, "%,.0f"), Figure.json("failures", loop.failures()));
            return acked;
        }

        /** Prints the fill's progress every 10 s until interrupted. */
        private Thread progress(ClosedLoop acked, long n) {
            long f0 = System.nanoTime();
            Thread t = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Thread.sleep(10_000);
                        out.printf(Locale.ROOT, "  %,d / %,d (%.0f/s)%n", acked.acked(), n,
                                acked.acked() / ((System.nanoTime() - f0) / 1e9));
                    }
                } catch (InterruptedException done) {
                    // fill finished
                }
            }, "fill-progress");
            t.setDaemon(true);
            t.start();
            return t;
        }

        private void startup(ServerControl srv, TopicsApi api, TopicInfo before, long expectedKept, Deadline deadline)
                throws Exception {
            out.printf(Locale.ROOT, "(c) SIGTERM and start again on the same data (~%,d kept events)%n", expectedKept);
            RestartTiming t = srv.restart(RestartMode.GRACEFUL, deadline);
            double startToReadyMs = t.stoppedNanos() < 0 ? -1 : (t.readyNanos() - t.stoppedNanos()) / 1e6;
            long[] recovered = recoveredLine(deadline);
            TopicInfo after = api.topic(before.topic());
            boolean same = after.epoch().equals(before.epoch()) && Objects.equals(after.head(), before.head());
            report.check("(c) restarted server has the same epoch and head", same,
                    before.topic() + ": " + before.head() + " before, " + after.head() + " after");
            report.check("(c) server recovered every kept event", recovered[0] >= expectedKept, recovered[0] < 0
                    ? "no \"events recovered\" line in the server log"
                    : String.format(Locale.ROOT, "%,d recovered, %,d expected at least", recovered[0], expectedKept));
            report.check("(c) drained server exited 0", t.exitCode() == 0 || t.exitCode() == -1,
                    String.format(Locale.ROOT, "exit %d %.1f s after SIGTERM", t.exitCode(), t.stoppedAfterMs() / 1000));
            ObjectNode json = report.data().putObject("startup");
            figures.row(json, Figure.label("(c) kept events at the restart"),
                            Figure.shown("expectedKeptEvents", expectedKept, recovered[0] >= 0 ? recovered[0] : expectedKept))
                    .row(json, Figure.label("(c) start-up: process start → /readyz 200, ms"),
                            Figure.shown("processStartToReadyMs", startToReadyMs,
                                    startToReadyMs < 0 ? "n/a" : Figure.round1(startToReadyMs)))
                    .row(json, Figure.label("(c) server log: events recovered in ms"),
                            Figure.json("recoveredEvents", recovered[0]),
                            Figure.shown("recoveredInMs", recovered[1], recovered[0] < 0 ? "n/a" : String.format(
                                    Locale.ROOT, "%,d events recovered in %,d ms", recovered[0], recovered[1])))
                    .row(json, Figure.label("(c) graceful stop (SIGTERM → exit), ms"),
                            Figure.shown("stopMs", t.stoppedAfterMs(), Figure.round1(t.stoppedAfterMs())),
                            Figure.json("exitCode", t.exitCode()));
            report.note("(c) process start → /readyz 200 includes JVM start and the index rebuild; /readyz is polled "
                    + "every 50 ms. \"recovered in M ms\" is the server's own figure from its log (after JVM start).");
        }

        /** {recovered events, ms} from the newest server log, or {-1, -1}. */
        private long[] recoveredLine(Deadline deadline) throws IOException, InterruptedException {
            long end = System.nanoTime() + deadline.cap(Duration.ofSeconds(5)).toNanos();
            while (true) {
                Path newest = null;
                int best = -1;
                try (Stream<Path> s = Files.list(run.reportDir())) {
                    for (Path p : (Iterable<Path>) s::iterator) {
                        String name = p.getFileName().toString();
                        if (name.matches("server-\\d+\\.log")) {
                            int n = Integer.parseInt(name.substring(7, name.length() - 4));
                            if (n > best) {
                                best = n;
                                newest = p;
                            }
                        }
                    }
                }
                if (newest != null) {
                    Matcher m = RECOVERED.matcher(Files.readString(newest, StandardCharsets.UTF_8));
                    if (m.find()) {
                        return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
                    }
                }
                if (System.nanoTime() - end >= 0) {
                    return new long[] {-1, -1};
                }
                Thread.sleep(100);
            }
        }
    }

    /** Counts the replayed events and checks that each is exactly the next one. */
    private static final class ReplayListener implements PushListener {
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicLong count = new AtomicLong();
        final AtomicLong outOfOrder = new AtomicLong();
        final AtomicLong resets = new AtomicLong();
        private final long expected;
        private long next;
        volatile long firstNanos;
        volatile long lastNanos;
        volatile String firstProblem;

        ReplayListener(long firstSeq, long expected) {
            this.next = firstSeq;
            this.expected = expected;
            if (expected == 0) {
                done.countDown();
            }
        }

        @Override
        public void onEvent(String topic, EventId id, long ts, JsonNode data) {
            long now = System.nanoTime();
            if (firstNanos == 0) {
                firstNanos = now;
            }
            if (id.seq() != next) {
                outOfOrder.incrementAndGet();
                if (firstProblem == null) {
                    firstProblem = "expected seq " + next + ", got " + id;
                }
            }
            next = id.seq() + 1;
            if (count.incrementAndGet() == expected) {
                lastNanos = now;
                done.countDown();
            }
        }

        @Override
        public void onReset(String topic, EventId id, ResetReason reason) {
            resets.incrementAndGet();
            if (firstProblem == null) {
                firstProblem = "reset to " + id + " (" + reason + ")";
            }
        }
    }

}
