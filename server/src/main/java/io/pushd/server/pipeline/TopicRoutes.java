package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.TopicName;
import io.pushd.server.auth.AccessDecision;
import io.pushd.server.auth.Redaction;
import io.pushd.server.history.TopicRange;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * {@code /v1/topics/{topic}} (GET: the topic's epoch, head and oldest) and
 * {@code /v1/topics/{topic}/events} (POST: {@link PublishRoute}; GET: a page of history,
 * {@link HistoryRoute}).
 */
final class TopicRoutes {

    static final String PREFIX = "/v1/topics/";

    private final ServerContext server;
    private final PublishRoute publish;
    private final HistoryRoute events;

    TopicRoutes(ServerContext server) {
        this.server = server;
        this.publish = new PublishRoute(server);
        this.events = new HistoryRoute(server);
    }

    /**
     * Answers at once and returns null, or returns the answer a publish gets later from the
     * writer (see {@link PublishRoute#publish}) or a history page once its events were fetched.
     */
    CompletionStage<FullHttpResponse> handle(ChannelHandlerContext ctx, FullHttpRequest req, String path) {
        String rest = path.substring(PREFIX.length());
        int slash = rest.indexOf('/');
        String topic = slash < 0 ? rest : rest.substring(0, slash);
        String tail = slash < 0 ? "" : rest.substring(slash);
        if (!tail.isEmpty() && !tail.equals("/events")) {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.NOT_FOUND,
                    "no resource at " + HttpResponses.shorten(Redaction.uri(req.uri()))));
            return null;
        }
        if (!TopicName.isValid(topic)) {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_TOPIC,
                    "invalid topic '" + HttpResponses.shorten(topic)
                            + "' (expected: 1-200 characters of [A-Za-z0-9_.:-])"));
            return null;
        }
        boolean read = req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD);
        if (read) {
            // the history is what a subscription replays, and the info tells a topic exists: both need
            // the token's topics to cover the topic, as a subscribe does
            AccessDecision access = server.sessions().access().subscribe(
                    req.headers().get(HttpHeaderNames.AUTHORIZATION), req.uri(), List.of(topic));
            if (!access.allowed()) {
                HttpResponses.reply(ctx, req, AccessAnswers.refusal(access));
                return null;
            }
        }
        if (tail.isEmpty()) {
            java.util.concurrent.CompletableFuture<Void> ready = server.history().prepare(topic).toCompletableFuture();
            boolean get = req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD);
            if (get && (!ready.isDone() || ready.isCompletedExceptionally())) { // a shared history loads the topic first: off the event loop
                boolean head = req.method().equals(HttpMethod.HEAD);
                return ready.handle((v, e) -> {
                    FullHttpResponse res = e != null ? HttpResponses.withRetryAfter(HttpResponses.error(
                            HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.NOT_ACCEPTING,
                            "the history could not be read now; retry later")) : info(topic);
                    if (head) {
                        res.content().clear();
                    }
                    return res;
                });
            }
            HttpResponses.onlyGet(ctx, req, () -> HttpResponses.reply(ctx, req, info(topic)));
            return null;
        }
        if (req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD)) {
            return events.handle(ctx, req, topic);
        }
        if (!req.method().equals(HttpMethod.POST)) {
            HttpResponses.methodNotAllowed(ctx, req, "GET or POST", "GET, HEAD, POST");
            return null;
        }
        return publish.publish(ctx, req, topic);
    }

    private FullHttpResponse info(String topic) {
        TopicRange range = server.history().range(topic);
        String epoch = server.history().epoch(topic);
        var body = ProtocolCodec.mapper().createObjectNode();
        body.put("topic", topic);
        body.put("epoch", epoch);
        body.put("head", range.headId(epoch) == null ? null : range.headId(epoch).toString());
        body.put("oldest", range.oldestId(epoch) == null ? null : range.oldestId(epoch).toString());
        return HttpResponses.json(HttpResponseStatus.OK, body);
    }
}
