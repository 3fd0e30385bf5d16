package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM on the packaged server: readiness off at once, work taken during the balancer grace and
 * refused after it, every WebSocket closed with 1012 and a retry hint spread over the window (from
 * when a restart of this single node would be over), a clean exit, and nothing lost.
 */
class DrainIT {

    private static final int CLIENTS = 200;
    private static final int TOPICS = 4;
    private static final int EVENTS_PER_TOPIC = 20;
    private static final long LB_GRACE_MILLIS = 2_000;
    /** drain.minWindow default; 200 clients at reconnect.targetRate 2000/s need less. */
    private static final long WINDOW_MILLIS = 5_000;
    /** The drain sends its closes over a second ({@code Drainer.CLOSE_PACING}) and plans the returns over it too. */
    private static final long PACING_MILLIS = 1_000;

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    private final List<WsClient> clients = new CopyOnWriteArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @AfterEach
    void killServersAndClients() throws InterruptedException {
        servers.killAll();
        for (WsClient c : clients) {
            c.socket().abort();
        }
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aSecondSigtermForcesTheExitAndLosesNothingAcknowledged() throws Exception {
        Path data = tmp.resolve("forced");
        int port = ServerProcess.freePort();
        // a long balancer grace keeps the drain busy, so the second signal has something to cut short
        ServerProcess server = servers.start(tmp, port, data, "drain.lbGrace=20s", "drain.deadline=25s");
        List<String> acknowledged = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Http.Response r = Http.publish(port, "forced", "{\"n\":" + i + "}");
            assertThat(r.status()).isEqualTo(201);
            acknowledged.add(r.json().path("id").asText());
        }
        server.sigterm();
        Thread.sleep(500);
        assertThat(server.isAlive()).as("still draining after the first SIGTERM").isTrue();
        long t0 = System.nanoTime();
        server.sigterm();
        assertThat(server.awaitExit(Duration.ofSeconds(5))).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(server.output()).contains("forced exit: second signal");

        ServerProcess again = servers.start(tmp, port, data);
        Http.Response info = Http.get(port, "/v1/topics/forced");
        assertThat(info.json().path("head").asText()).isEqualTo(acknowledged.get(acknowledged.size() - 1));
        assertThat(info.json().path("oldest").asText()).isEqualTo(acknowledged.get(0));
        assertThat(again.isAlive()).isTrue();
    }

    @Test
    void sigtermDrainsReadinessThenWorkThenClosesEveryClientWithSpreadRetryHintsAndLosesNothing()
            throws Exception {
        Path data = tmp.resolve("data");
        int port = ServerProcess.freePort();
        ServerProcess server = servers.start(tmp, port, data, "drain.lbGrace=2s");
        assertThat(Http.get(port, "/readyz").status()).isEqualTo(200);

        // 200 subscribers over 4 topics, each confirmed by its `subscribed`.
        List<Future<WsClient>> connecting = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            String topic = topic(i % TOPICS);
            connecting.add(pool.submit(() -> {
                WsClient c = WsClient.connect(port, "topic=" + topic);
                clients.add(c);
                JsonNode first = c.next(Duration.ofSeconds(15));
                assertThat(first.path("type").asText()).isEqualTo("subscribed");
                assertThat(first.path("topic").asText()).isEqualTo(topic);
                return c;
            }));
        }
        List<WsClient> subscribers = new ArrayList<>();
        for (Future<WsClient> f : connecting) {
            subscribers.add(f.get(60, TimeUnit.SECONDS));
        }

        // Events before the drain reach everyone, in order.
        Map<String, List<String>> published = new TreeMap<>();
        for (int n = 1; n <= EVENTS_PER_TOPIC; n++) {
            for (int t = 0; t < TOPICS; t++) {
                published.computeIfAbsent(topic(t), k -> new ArrayList<>())
                        .add(publishCreated(port, topic(t), "{\"n\":" + n + "}"));
            }
        }
        String epoch = EventId.parse(published.get(topic(0)).get(0)).epoch();
        for (int i = 0; i < CLIENTS; i++) {
            List<JsonNode> got = subscribers.get(i).awaitEvents(EVENTS_PER_TOPIC, Duration.ofSeconds(20));
            assertThat(got).extracting(m -> m.path("id").asText())
                    .as("client " + i).containsExactlyElementsOf(published.get(topic(i % TOPICS)));
        }

        long t0 = System.nanoTime();
        server.sigterm();

        // Readiness goes off at once.
        long notReadyAfter = -1;
        while (millisSince(t0) < 1_500) {
            Http.Response r = Http.get(port, "/readyz");
            if (r.status() == 503) {
                notReadyAfter = millisSince(t0);
                assertThat(r.header("Retry-After")).isNotNull();
                break;
            }
            Thread.sleep(50);
        }
        assertThat(notReadyAfter).as("ms until /readyz answered 503 (-1: not within 1.5 s)").isBetween(0L, 1_500L);

        // During the balancer grace publishes are still taken; after it they are refused.
        String duringGrace = publishCreated(port, topic(0), "{\"n\":\"grace\"}");
        published.get(topic(0)).add(duringGrace);
        long graceLeft = LB_GRACE_MILLIS - millisSince(t0);
        assertThat(graceLeft).as("the publish during the grace came back before the grace ended").isPositive();
        Thread.sleep(graceLeft);
        Http.Response refused = null;
        while (millisSince(t0) < LB_GRACE_MILLIS + 2_500) {
            Http.Response r = Http.publish(port, topic(1), "{\"n\":\"late\"}");
            if (r.status() != 201) {
                refused = r;
                break;
            }
            published.get(topic(1)).add(r.json().path("id").asText()); // the server's drain started late
            Thread.sleep(50);
        }
        long refusedAfter = millisSince(t0);
        assertThat(refused).as("a publish refused within 2.5 s after the grace").isNotNull();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("Retry-After")).isNotNull();
        assertThat(Integer.parseInt(refused.header("Retry-After"))).isPositive();
        assertThat(refused.json().path("error").asText()).isEqualTo("not_accepting");
        assertThat(refused.json().path("message").asText()).isNotEmpty();
        assertThat(refusedAfter).as("ms until the first refused publish").isGreaterThanOrEqualTo(LB_GRACE_MILLIS);

        // Every subscriber is told to come back later, its return planned within the close pacing
        // plus the window: the instants it is due back (close + hint) spread evenly over that span.
        List<Long> hints = new ArrayList<>();
        long[] closedAt = new long[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            WsClient c = subscribers.get(i);
            assertThat(c.awaitClose(Duration.ofSeconds(15))).as("close code of client " + i).isEqualTo(1012);
            OptionalLong retry = CloseCode.parseRetryMs(c.closeReason());
            assertThat(retry).as("retry hint in close reason '" + c.closeReason() + "'").isPresent();
            hints.add(retry.getAsLong());
            closedAt[i] = c.closedAtNanos();
        }
        long allClosedAfter = millisSince(t0);
        // The JDK client answers a server close frame by itself once onClose returns (WsClient
        // does not call sendClose), so the server sees complete closing handshakes.
        long answered = 0;
        for (int i = 0; i < 40 && answered < CLIENTS; i++) {
            answered = subscribers.stream().filter(c -> c.socket().isOutputClosed()).count();
            Thread.sleep(i == 0 ? 0 : 50);
        }
        assertThat(answered).as("clients that sent their close frame back").isEqualTo(CLIENTS);
        // A single node's returns begin once a restart would be over: its own launch and start
        // (the next process takes as long) plus the longest stay after the first close (6 s)
        // (drain.expectRestart, on by default), said in the drain's log line.
        long startup = logged(server.output(), "events recovered in (\\d+) ms");
        long after = logged(server.output(), "retry window from (\\d+) ms on");
        assertThat(after).as("returns planned after, ms; the start took %d ms", startup)
                .isBetween(startup + 6_000, startup + 6_000 + 30_000);
        long span = PACING_MILLIS + WINDOW_MILLIS;
        assertThat(hints).allSatisfy(h -> assertThat(h).isBetween(after - PACING_MILLIS, after + span));
        long firstClose = Arrays.stream(closedAt).min().orElseThrow();
        int[] perSecond = new int[(int) (span / 1000)];
        for (int i = 0; i < CLIENTS; i++) {
            long due = (closedAt[i] - firstClose) / 1_000_000 + hints.get(i) - after;
            assertThat(due).as("due back %d ms after the restart (close %d + hint %d)", due,
                    (closedAt[i] - firstClose) / 1_000_000, hints.get(i)).isGreaterThanOrEqualTo(-50);
            perSecond[(int) Math.min(due / 1000, perSecond.length - 1)]++; // the span's end counts to the last slice
        }
        for (int s = 0; s < perSecond.length; s++) {
            // an even plan puts CLIENTS/6 in each second; the slack covers when each close frame was read here
            assertThat(perSecond[s]).as("due back in [" + s + "000, " + (s + 1) + "000) ms; all slices: "
                    + Arrays.toString(perSecond)).isBetween(CLIENTS / 10, CLIENTS * 3 / 10);
        }

        int exit = server.awaitExit(Duration.ofSeconds(20));
        long exitedAfter = millisSince(t0);
        assertThat(exit).as("exit code after SIGTERM").isZero();
        assertThat(exitedAfter).as("ms from SIGTERM to exit").isLessThan(15_000);
        System.out.printf("drain: readyz 503 after %d ms, first refused publish after %d ms, all %d clients closed"
                        + " after %d ms, exit after %d ms; hints per second %s%n", notReadyAfter, refusedAfter,
                CLIENTS, allClosedAfter, exitedAfter, Arrays.toString(perSecond));

        // Nothing taken before or during the drain is lost.
        servers.start(tmp, port, data);
        for (Map.Entry<String, List<String>> topic : published.entrySet()) {
            WsClient c = WsClient.connect(port, "topic=" + topic.getKey() + "&after=" + epoch + "-0");
            clients.add(c);
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            List<JsonNode> replayed = c.awaitEvents(topic.getValue().size(), Duration.ofSeconds(10));
            assertThat(replayed).extracting(m -> m.path("id").asText())
                    .as("replay of " + topic.getKey()).containsExactlyElementsOf(topic.getValue());
            assertThat(c.messages.poll(200, TimeUnit.MILLISECONDS)).as("more events in " + topic.getKey()).isNull();
        }
    }

    /** The number the first match of {@code regex} in the server's output captured. */
    private static long logged(String output, String regex) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher(output);
        assertThat(m.find()).as("'%s' in the server's output:%n%s", regex, output).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static String topic(int i) {
        return "drain-" + i;
    }

    private static long millisSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    private static String publishCreated(int port, String topic, String json) {
        Http.Response r = Http.publish(port, topic, json);
        assertThat(r.status()).as("publish to " + topic + ": " + r.body()).isEqualTo(201);
        return r.json().path("id").asText();
    }
}
