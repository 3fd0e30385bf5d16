package io.pushd.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.client.ClientResources;
import io.pushd.client.PushClient;
import io.pushd.client.PushClientOptions;
import io.pushd.client.PushListener;
import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.DurationConverter;
import io.pushd.loadtest.OptionDefaults;
import io.pushd.loadtest.Commands;
import io.pushd.loadtest.RunOptions;
import io.pushd.loadtest.publish.Publisher;
import io.pushd.loadtest.report.LatencySummary;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.report.ReportedRun;
import io.pushd.loadtest.report.Table;
import io.pushd.loadtest.server.ProcessCpu;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import io.pushd.loadtest.server.ServerControl;
import io.pushd.loadtest.server.ServerOptions;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
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
    private static final ObjectMapper JSON = new ObjectMapper();

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

    private record FillResult(long failures, String firstFailure) {
    }

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
        private final List<List<Object>> figures = new ArrayList<>();

        Run(String commandLine, PrintStream out) {
            this.out = out;
            this.report = new Report("bench", "Bench: publish rate, replay rate, start-up time"
                    + (fill > 0 ? String.format(Locale.ROOT, " with %,d kept events", fill) : ""), commandLine);
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
            return ReportedRun.run(report, run, deadline, out, log, d -> {
                try {
                    execute(d);
                } finally {
                    // checks and tables are separate lists: adding the table before a failed check is the same report
                    if (!figures.isEmpty()) {
                        report.table(new Table("Figures", List.of("what", "value"), figures));
                    }
                }
            });
        }

        private void figure(String what, Object value) {
            figures.add(List.of(what, value));
            out.println("  " + what + ": " + (value instanceof Double d ? String.format(Locale.ROOT, "%,.1f", d)
                    : value));
        }

        private void execute(Deadline deadline) throws Exception {
            List<String> benchTopics = Publisher.topicNames("bn-" + runId, topics);
            try (ServerControl srv = server.open(run.reportDir(), deadline, true);
                 Http http = new Http(srv.httpBase())) {
                report.setting("server", srv.describe());
                out.println("server: " + srv.describe());

                // ---- (a) publish rate
                OptionalLong pid = ProcessCpu.childServerPid(srv);
                out.printf(Locale.ROOT, "(a) %d closed-loop publishers on %d topics: %.1f s warm-up, %.1f s measured%n",
                        publishers, topics, warmup.toMillis() / 1000.0, duration.toMillis() / 1000.0);
                ClosedLoop a = new ClosedLoop(http, benchTopics, publishers, "a");
                a.start();
                deadline.sleep(warmup);
                a.resetWindow();
                Optional<ProcessCpu.Sample> cpu0 = ProcessCpu.Sample.of(pid);
                long t0 = System.nanoTime();
                deadline.sleep(duration);
                long ackedInWindow = a.acked();
                long t1 = System.nanoTime();
                Optional<ProcessCpu.Sample> cpu1 = ProcessCpu.Sample.of(pid);
                Histogram ackLatency = a.latency();
                a.stopAndAwait(Duration.ofSeconds(15));
                double windowS = (t1 - t0) / 1e9;
                double publishPerS = ackedInWindow / windowS;
                double serverCpu = ProcessCpu.Sample.percentOfOneCore(cpu0, cpu1);
                LatencySummary ack = LatencySummary.of("(a) publish acknowledged (request sent → 201)", ackLatency, 1000);
                report.latency(ack);
                report.check("(a) every publish acknowledged with 201", a.failures() == 0 && a.acked() > 0,
                        String.format(Locale.ROOT, "%,d acknowledged in all, %,d failed%s", a.totalAcked(), a.failures(),
                                a.firstFailure() == null ? "" : "; first: " + a.firstFailure()));
                figure("(a) acknowledged publishes/s", round1(publishPerS));
                figure("(a) ack latency p50 / p99 ms", String.format(Locale.ROOT, "%.2f / %.2f", ack.p50Ms(), ack.p99Ms()));
                figure("(a) server CPU, % of one core", serverCpu < 0 ? "n/a" : round1(serverCpu));
                report.data().putObject("publish")
                        .put("publishers", publishers)
                        .put("windowSeconds", windowS)
                        .put("acknowledgedInWindow", ackedInWindow)
                        .put("acknowledgedPerSecond", publishPerS)
                        .put("ackLatencyP50Ms", ack.p50Ms())
                        .put("ackLatencyP90Ms", ack.p90Ms())
                        .put("ackLatencyP99Ms", ack.p99Ms())
                        .put("ackLatencyMaxMs", ack.maxMs())
                        .put("failures", a.failures())
                        .put("totalAcknowledged", a.totalAcked())
                        .put("serverCpuPercentOfOneCore", serverCpu);

                // ---- (b) replay rate to one client
                String fullest = benchTopics.get(0);
                long most = -1;
                for (int i = 0; i < benchTopics.size(); i++) {
                    if (a.perTopic(i) > most) {
                        most = a.perTopic(i);
                        fullest = benchTopics.get(i);
                    }
                }
                TopicInfo before = http.topic(fullest);
                if (replayEvents > before.kept()) {
                    // a replay of a few hundred events measures the connect, not the replay
                    long add = Math.min(replayEvents, 100_000) - before.kept();
                    out.printf(Locale.ROOT, "(b) adding %,d events to %s for the replay%n", add, fullest);
                    PipelinedFiller one = new PipelinedFiller(srv.host(), srv.port(), List.of(fullest), 8);
                    one.fill(add, System.nanoTime() + deadline.remaining().toNanos());
                    deadline.check("filling the replay topic");
                }
                TopicInfo info = http.topic(fullest);
                replay(srv, info, deadline);

                // ---- (c) start-up time with the kept events
                long kept = 0;
                for (String t : benchTopics) {
                    kept += http.topic(t).kept();
                }
                long fillAcked = 0;
                if (fill > kept) {
                    fillAcked = fillStore(srv, fill - kept, deadline);
                }
                long expectedKept = kept + fillAcked;
                startup(srv, http, info, expectedKept, deadline);
            }
        }

        private void replay(ServerControl srv, TopicInfo info, Deadline deadline) throws InterruptedException {
            long expected = info.kept();
            out.printf(Locale.ROOT, "(b) replaying %,d kept events of %s (%s..%s) to one client%n", expected,
                    info.topic(), info.oldest(), info.head());
            ReplayListener listener = new ReplayListener(info.oldest() == null ? 1 : info.oldest().seq(), expected);
            long start;
            try (ClientResources resources = ClientResources.create(1)) {
                PushClientOptions options = PushClientOptions.builder(srv.host(), srv.port())
                        .topic(info.topic(), new EventId(info.epoch(), 0))
                        .build();
                start = System.nanoTime();
                PushClient client = resources.newClient(options, listener).start();
                boolean done = listener.done.await(deadline.cap(replayTimeout).toMillis(), TimeUnit.MILLISECONDS);
                client.close();
                deadline.check("replaying");
                double seconds = ((done ? listener.lastNanos : System.nanoTime()) - start) / 1e9;
                double firstS = listener.firstNanos == 0 ? -1 : (listener.firstNanos - start) / 1e9;
                double perS = listener.count.get() / seconds;
                boolean ok = done && listener.count.get() == expected && listener.outOfOrder.get() == 0
                        && listener.resets.get() == 0;
                report.check("(b) replay delivered every kept event once, in order", ok, String.format(Locale.ROOT,
                        "%,d of %,d events in %.3f s, %d out of order, %d resets%s", listener.count.get(), expected,
                        seconds, listener.outOfOrder.get(), listener.resets.get(),
                        listener.firstProblem == null ? "" : "; first: " + listener.firstProblem));
                figure("(b) replay events/s (subscribe from <epoch>-0 to last kept event)", round1(perS));
                figure("(b) replayed events / seconds", String.format(Locale.ROOT, "%,d / %.3f s (first event after %.3f s)",
                        listener.count.get(), seconds, firstS));
                report.data().putObject("replay")
                        .put("topic", info.topic())
                        .put("keptEvents", expected)
                        .put("received", listener.count.get())
                        .put("seconds", seconds)
                        .put("firstEventSeconds", firstS)
                        .put("eventsPerSecond", perS)
                        .put("outOfOrder", listener.outOfOrder.get())
                        .put("resets", listener.resets.get())
                        .put("complete", ok);
            }
        }

        private long fillStore(ServerControl srv, long n, Deadline deadline) throws InterruptedException {
            List<String> names = Publisher.topicNames("fill-" + runId, fillTopics);
            out.printf(Locale.ROOT, "(c) filling %,d events over %,d topics with %d publishers%n", n, fillTopics,
                    fillPublishers);
            PipelinedFiller filler = new PipelinedFiller(srv.host(), srv.port(), names, fillPublishers);
            long f0 = System.nanoTime();
            Thread progress = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Thread.sleep(10_000);
                        out.printf(Locale.ROOT, "  %,d / %,d (%.0f/s)%n", filler.acked(), n,
                                filler.acked() / ((System.nanoTime() - f0) / 1e9));
                    }
                } catch (InterruptedException done) {
                    // fill finished
                }
            }, "fill-progress");
            progress.setDaemon(true);
            progress.start();
            filler.fill(n, System.nanoTime() + deadline.remaining().toNanos());
            progress.interrupt();
            deadline.check("filling the store");
            double s = (System.nanoTime() - f0) / 1e9;
            long acked = filler.acked();
            FillResult fillLoop = new FillResult(filler.failed(), filler.firstFailure());
            report.check("(c) fill: every publish acknowledged with 201", fillLoop.failures() == 0 && acked >= n,
                    String.format(Locale.ROOT, "%,d acknowledged (target %,d), %,d failed%s", acked, n,
                            fillLoop.failures(), fillLoop.firstFailure() == null ? "" : "; first: "
                                    + fillLoop.firstFailure()));
            figure("(c) fill: events / seconds / events/s", String.format(Locale.ROOT, "%,d / %.1f s / %,.0f", acked, s,
                    acked / s));
            report.data().putObject("fill").put("events", acked).put("topics", fillTopics)
                    .put("publishers", fillPublishers).put("seconds", s).put("eventsPerSecond", acked / s)
                    .put("failures", fillLoop.failures());
            return acked;
        }

        private void startup(ServerControl srv, Http http, TopicInfo before, long expectedKept, Deadline deadline)
                throws Exception {
            out.printf(Locale.ROOT, "(c) SIGTERM and start again on the same data (~%,d kept events)%n", expectedKept);
            RestartTiming t = srv.restart(RestartMode.GRACEFUL, deadline);
            double startToReadyMs = t.stoppedNanos() < 0 ? -1 : (t.readyNanos() - t.stoppedNanos()) / 1e6;
            long[] recovered = recoveredLine(deadline);
            TopicInfo after = http.topic(before.topic());
            boolean same = after.epoch().equals(before.epoch()) && java.util.Objects.equals(after.head(), before.head());
            report.check("(c) restarted server has the same epoch and head", same,
                    before.topic() + ": " + before.head() + " before, " + after.head() + " after");
            boolean recoveredOk = recovered[0] >= 0 && recovered[0] >= expectedKept;
            report.check("(c) server recovered every kept event", recoveredOk, recovered[0] < 0
                    ? "no \"events recovered\" line in the server log"
                    : String.format(Locale.ROOT, "%,d recovered, %,d expected at least", recovered[0], expectedKept));
            report.check("(c) drained server exited 0", t.exitCode() == 0 || t.exitCode() == -1,
                    String.format(Locale.ROOT, "exit %d %.1f s after SIGTERM", t.exitCode(), t.stoppedAfterMs() / 1000));
            figure("(c) kept events at the restart", recovered[0] >= 0 ? recovered[0] : expectedKept);
            figure("(c) start-up: process start → /readyz 200, ms", startToReadyMs < 0 ? "n/a" : round1(startToReadyMs));
            figure("(c) server log: events recovered in ms", recovered[0] < 0 ? "n/a"
                    : String.format(Locale.ROOT, "%,d events recovered in %,d ms", recovered[0], recovered[1]));
            figure("(c) graceful stop (SIGTERM → exit), ms", round1(t.stoppedAfterMs()));
            report.data().putObject("startup")
                    .put("expectedKeptEvents", expectedKept)
                    .put("recoveredEvents", recovered[0])
                    .put("recoveredInMs", recovered[1])
                    .put("processStartToReadyMs", startToReadyMs)
                    .put("stopMs", t.stoppedAfterMs())
                    .put("exitCode", t.exitCode());
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

    /** {@code GET /v1/topics/{topic}}. */
    record TopicInfo(String topic, String epoch, EventId head, EventId oldest) {
        long kept() {
            return head == null || oldest == null ? 0 : head.seq() - oldest.seq() + 1;
        }
    }

    /** One JDK HTTP client (HTTP/1.1, keep-alive) on two threads: the load test must leave the cores to the server. */
    static final class Http implements AutoCloseable {
        final URI base;
        final ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "push-bench-http");
            t.setDaemon(true);
            return t;
        });
        final HttpClient client;

        Http(URI base) {
            this.base = base;
            this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2)).executor(executor).build();
        }

        HttpRequest publish(String topic, String body) {
            return HttpRequest.newBuilder(base.resolve("/v1/topics/" + URLEncoder.encode(topic, StandardCharsets.UTF_8)
                            + "/events"))
                    .timeout(REQUEST_TIMEOUT)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build();
        }

        TopicInfo topic(String topic) throws InterruptedException {
            HttpRequest req = HttpRequest.newBuilder(base.resolve("/v1/topics/"
                    + URLEncoder.encode(topic, StandardCharsets.UTF_8))).timeout(REQUEST_TIMEOUT).GET().build();
            try {
                HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("GET /v1/topics/" + topic + ": " + r.statusCode() + " " + r.body());
                }
                JsonNode j = JSON.readTree(r.body());
                return new TopicInfo(topic, j.get("epoch").asText(), id(j.get("head")), id(j.get("oldest")));
            } catch (IOException e) {
                throw new IllegalStateException("GET /v1/topics/" + topic + ": " + e, e);
            }
        }

        private static EventId id(JsonNode n) {
            return n == null || n.isNull() ? null : EventId.parse(n.asText());
        }

        @Override
        public void close() {
            executor.shutdownNow();
        }
    }

    /**
     * {@code concurrency} publishers, each sending its next event as soon as the previous one was
     * answered, round robin over the topics, until stopped or {@code limit} events were sent.
     */
    static final class ClosedLoop {
        private final Http http;
        private final List<String> topics;
        private final int concurrency;
        private final String tag;
        private final AtomicLong sequence = new AtomicLong();
        private final AtomicLong acked = new AtomicLong();
        private final AtomicLong windowAcked = new AtomicLong();
        private final AtomicLong failures = new AtomicLong();
        private final AtomicLongArray perTopic;
        private final AtomicInteger running = new AtomicInteger();
        private final Recorder latencyMicros = new Recorder(3);
        private volatile boolean stopped;
        private volatile long limit = Long.MAX_VALUE;
        private volatile String firstFailure;

        ClosedLoop(Http http, List<String> topics, int concurrency, String tag) {
            this.http = http;
            this.topics = List.copyOf(topics);
            this.concurrency = concurrency;
            this.tag = tag;
            this.perTopic = new AtomicLongArray(topics.size());
        }

        void limit(long n) {
            limit = n;
        }

        void start() {
            for (int i = 0; i < concurrency; i++) {
                running.incrementAndGet();
                next();
            }
        }

        private void next() {
            long n = sequence.getAndIncrement();
            if (stopped || n >= limit) {
                running.decrementAndGet();
                return;
            }
            int ti = (int) (n % topics.size());
            String body = "{\"n\":" + n + ",\"src\":\"" + tag + "\",\"v\":\"abcdefghij\"}";
            long t0 = System.nanoTime();
            http.client.sendAsync(http.publish(topics.get(ti), body), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((r, err) -> {
                        if (err == null && r.statusCode() == 201) {
                            latencyMicros.recordValue(Math.max(0, (System.nanoTime() - t0) / 1_000));
                            acked.incrementAndGet();
                            windowAcked.incrementAndGet();
                            perTopic.incrementAndGet(ti);
                        } else {
                            failures.incrementAndGet();
                            if (firstFailure == null) {
                                firstFailure = err != null ? err.toString() : r.statusCode() + " " + r.body();
                            }
                        }
                        next();
                    });
        }

        /** Starts the measured window: counters and latencies from now on. */
        void resetWindow() {
            windowAcked.set(0);
            latencyMicros.reset();
        }

        long acked() {
            return windowAcked.get();
        }

        long totalAcked() {
            return acked.get();
        }

        long perTopic(int i) {
            return perTopic.get(i);
        }

        long failures() {
            return failures.get();
        }

        String firstFailure() {
            return firstFailure;
        }

        boolean finished() {
            return running.get() == 0;
        }

        Histogram latency() {
            return latencyMicros.getIntervalHistogram();
        }

        void stopAndAwait(Duration timeout) throws InterruptedException {
            stopped = true;
            long end = System.nanoTime() + timeout.toNanos();
            while (running.get() > 0 && System.nanoTime() - end < 0) {
                Thread.sleep(10);
            }
        }
    }

    private static double round1(double v) {
        return Math.round(v * 10) / 10.0;
    }
}
