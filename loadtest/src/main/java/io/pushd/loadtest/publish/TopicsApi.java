package io.pushd.loadtest.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.HttpMethod;
import io.pushd.loadtest.Deadline;
import io.pushd.protocol.EventId;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load test's one client of the topics API ({@code POST /v1/topics/{topic}/events},
 * {@code GET /v1/topics/{topic}}), over one {@link HttpPipeline}.
 */
public final class TopicsApi implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TopicsApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What {@code GET /v1/topics/{topic}} says (head and oldest null: never written). */
    public record TopicInfo(String topic, String epoch, EventId head, EventId oldest) {

        /** Events the server keeps: {@code oldest..head}. */
        public long kept() {
            return head == null || oldest == null ? 0 : head.seq() - oldest.seq() + 1;
        }
    }

    private final HttpPipeline http;
    private final Duration timeout;

    /**
     * @param connections kept-alive connections (opened as needed)
     * @param depth       requests pipelined on one connection before another one is used
     */
    public TopicsApi(String host, int port, int connections, int depth, Duration timeout) {
        this(host, port, connections, depth, timeout, null);
    }

    /** @param bearerToken sent as {@code Authorization: Bearer} on every request (auth.mode jwt); null: none */
    public TopicsApi(String host, int port, int connections, int depth, Duration timeout, String bearerToken) {
        this.http = new HttpPipeline(host, port, connections, depth, timeout, bearerToken);
        this.timeout = timeout;
    }

    /** Publishes {@code body} (JSON) to {@code topic}, with {@code idempotencyKey} unless null. */
    CompletableFuture<HttpPipeline.Answer> publish(String topic, String idempotencyKey, byte[] body) {
        return http.send(HttpMethod.POST, "/v1/topics/" + encode(topic) + "/events", idempotencyKey, body);
    }

    /** {@code GET /v1/topics/{topic}}; throws {@link IllegalStateException} on an error or a timeout. */
    public TopicInfo topic(String topic) throws InterruptedException {
        String what = "GET /v1/topics/" + topic;
        try {
            HttpPipeline.Answer a = http.send(HttpMethod.GET, "/v1/topics/" + encode(topic), null, null)
                    .get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
            if (a.status() != 200) {
                throw new IllegalStateException(what + ": " + a.status() + " " + a.body());
            }
            JsonNode j = JSON.readTree(a.body());
            return new TopicInfo(topic, j.get("epoch").asText(), id(j.get("head")), id(j.get("oldest")));
        } catch (ExecutionException | TimeoutException | IOException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException(what + ": " + cause, cause);
        }
    }

    /**
     * Each topic's head, each read tried up to {@code attempts} times {@code pause} apart (a server in
     * the middle of a storm may answer slowly).
     */
    public Map<String, EventId> heads(List<String> topics, int attempts, Duration pause, Deadline deadline)
            throws InterruptedException {
        Map<String, EventId> heads = new LinkedHashMap<>();
        for (String t : topics) {
            for (int attempt = 1; ; attempt++) {
                try {
                    heads.put(t, topic(t).head());
                    break;
                } catch (IllegalStateException e) {
                    deadline.check("reading the topic heads");
                    if (attempt >= attempts) {
                        throw e;
                    }
                    log.info("retrying GET /v1/topics/{}: {}", t, e.getMessage());
                    Thread.sleep(pause.toMillis());
                }
            }
        }
        return heads;
    }

    /** {@code count} topic names {@code <prefix>-0 .. <prefix>-(count-1)}. */
    public static List<String> topicNames(String prefix, int count) {
        return java.util.stream.IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
    }

    private static EventId id(JsonNode n) {
        return n == null || n.isNull() ? null : EventId.parse(n.asText());
    }

    private static String encode(String topic) {
        return URLEncoder.encode(topic, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        http.close();
    }
}
