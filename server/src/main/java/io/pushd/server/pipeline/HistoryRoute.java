package io.pushd.server.pipeline;

import com.fasterxml.jackson.core.JsonGenerator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.pushd.protocol.ErrorCodes;
import io.pushd.server.auth.Redaction;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ResetReason;
import io.pushd.server.auth.TokenCarrier;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * {@code GET /v1/topics/{topic}/events?after=ID&limit=N}: a page of kept events and the cursor of
 * the next one, for an application that reloads after a {@code reset} or has no socket. The same
 * rule as a subscription decides whether {@code after} can be honoured; when it cannot, the answer
 * is {@code 409 {"error":"reset","reason":...,"head":...}} instead of a page with a hole.
 *
 * <p>Pages are bounded ({@link #MAX_LIMIT} events, about {@link #PAGE_BYTES} of event data), so
 * reading one on the event loop costs no more than a replay step or two. Events a shared history
 * does not hold at hand are {@link EventHistory#fetch fetched} without blocking the event loop;
 * then the answer comes later, in the connection's order (as a publish's does).
 */
final class HistoryRoute {

    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    /** A page stops after the event that crosses this (64 KiB events would otherwise make 64 MB pages). */
    static final int PAGE_BYTES = 1 << 20;
    /** Events per read, as in a replay step. */
    private static final int READ_STEP = 64;
    static final String RESET = "reset";

    private final ServerContext server;

    HistoryRoute(ServerContext server) {
        this.server = server;
    }

    /** Answers at once and returns null, or returns the answer that comes once events were fetched. */
    CompletionStage<FullHttpResponse> handle(ChannelHandlerContext ctx, FullHttpRequest req, String topic) {
        Map<String, List<String>> query = new QueryStringDecoder(req.uri(), StandardCharsets.UTF_8).parameters();
        for (String key : query.keySet()) {
            // access_token: the token's carrier for a browser (TopicRoutes checked it)
            if (!key.equals("after") && !key.equals("limit") && !key.equals(TokenCarrier.QUERY_PARAMETER)) {
                reply(ctx, req, badQuery(ErrorCodes.INVALID_QUERY, "unknown query parameter '"
                        + HttpResponses.shorten(key) + "' (expected: after, limit)"));
                return null;
            }
        }
        String limitText = single(query, "limit");
        String afterText = single(query, "after");
        if (limitText == null || afterText == null) {
            reply(ctx, req, badQuery(ErrorCodes.INVALID_QUERY, "'after' and 'limit' may be given once each"));
            return null;
        }
        int limit = parseLimit(limitText);
        if (limit < 0) {
            reply(ctx, req, badQuery(ErrorCodes.INVALID_QUERY, "limit: '" + HttpResponses.shorten(limitText)
                    + "' (expected: 1-" + MAX_LIMIT + ", default " + DEFAULT_LIMIT + ")"));
            return null;
        }
        EventId after = null;
        if (!afterText.isEmpty()) {
            try {
                after = EventId.parse(afterText);
            } catch (IllegalArgumentException e) {
                reply(ctx, req, badQuery(ErrorCodes.INVALID_ID, e.getMessage()));
                return null;
            }
        }
        EventId from = after;
        CompletableFuture<Void> ready = server.history().prepare(topic).toCompletableFuture();
        CompletableFuture<FullHttpResponse> answer = ready.isDone() && !ready.isCompletedExceptionally()
                ? page(ctx, topic, after, limit)
                : ready.handle((v, e) -> e).thenComposeAsync(e -> {
                    if (e != null) {
                        return CompletableFuture.completedFuture(unavailable()); // Redis away: the client retries
                    }
                    try {
                        return page(ctx, topic, from, limit);
                    } catch (RuntimeException failure) {
                        return CompletableFuture.completedFuture(HttpResponses.error(
                                HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL, "the history could not be read"));
                    }
                }, ctx.executor());
        if (answer.isDone()) {
            reply(ctx, req, answer.join());
            return null;
        }
        boolean head = req.method().equals(io.netty.handler.codec.http.HttpMethod.HEAD);
        return answer.thenApply(res -> {
            if (head) {
                res.content().clear();
            }
            return res;
        });
    }

    private static void reply(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse res) {
        HttpResponses.reply(ctx, req, res);
    }

    /** The one value of a parameter, "" when absent, null when repeated. */
    private static String single(Map<String, List<String>> query, String key) {
        List<String> values = query.getOrDefault(key, List.of());
        return values.size() > 1 ? null : values.isEmpty() ? "" : values.get(0);
    }

    /** The limit, or -1 when it is not a whole number in range. */
    static int parseLimit(String text) {
        if (text.isEmpty()) {
            return DEFAULT_LIMIT;
        }
        if (text.length() > 4 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        int n = Integer.parseInt(text);
        return n >= 1 && n <= MAX_LIMIT ? n : -1;
    }

    private static FullHttpResponse badQuery(String code, String message) {
        return HttpResponses.error(HttpResponseStatus.BAD_REQUEST, code, Redaction.text(message)); // it quotes the query
    }

    /** The page, done at once unless events had to be fetched; then completed on the connection's event loop. */
    private CompletableFuture<FullHttpResponse> page(ChannelHandlerContext ctx, String topic, EventId after, int limit) {
        EventHistory history = server.history();
        String epoch = history.epoch(topic);
        TopicRange range = history.range(topic);
        if (!history.epoch(topic).equals(epoch)) { // replaced between the two: the range may be the new one's
            return page(ctx, topic, after, limit);
        }
        long from;
        if (after == null) {
            from = range.hasKeptEvents() ? range.oldest() - 1 : range.head(); // the oldest kept, or nothing
        } else {
            ResetReason reason = resetReason(after, epoch, range);
            if (reason != null) {
                return CompletableFuture.completedFuture(reset(topic, epoch, range, reason));
            }
            from = after.seq();
        }
        PageWriter writer = new PageWriter(ctx, history, topic, epoch, from, limit, range, after);
        writer.run();
        return writer.answer;
    }

    /** The subscription's rule (replay.TopicSubscription): null when every event after {@code after} is kept. */
    static ResetReason resetReason(EventId after, String epoch, TopicRange range) {
        if (!after.epoch().equals(epoch)) {
            return ResetReason.UNKNOWN_EPOCH;
        }
        if (after.seq() > range.head()) {
            return ResetReason.FUTURE;
        }
        if (after.seq() < range.head() && (range.oldest() == 0 || after.seq() < range.oldest() - 1)) {
            return ResetReason.EXPIRED;
        }
        return null;
    }

    /**
     * 409: the request is well-formed but this history cannot answer it without a hole. The
     * client reloads its state from its source of truth and continues with {@code after=head}.
     */
    private static FullHttpResponse reset(String topic, String epoch, TopicRange range, ResetReason reason) {
        var body = ProtocolCodec.mapper().createObjectNode();
        body.put("error", RESET);
        body.put("reason", reason.wireName());
        body.put("message", switch (reason) {
            case EXPIRED -> "events after this ID are no longer kept; reload, then continue after 'head'";
            case UNKNOWN_EPOCH -> "this ID belongs to another history; reload, then continue after 'head'";
            case FUTURE -> "this ID lies beyond the head of the topic; reload, then continue after 'head'";
        });
        body.put("topic", topic);
        body.put("epoch", epoch);
        body.put("head", new EventId(epoch, range.head()).toString());
        body.put("oldest", range.oldestId(epoch) == null ? null : range.oldestId(epoch).toString());
        return HttpResponses.json(HttpResponseStatus.CONFLICT, body);
    }

    private static final class Page implements EventHistory.EventVisitor {
        private final JsonGenerator g;
        private final String epoch;
        private final int limit;
        long last;
        int count;
        int bytes;
        boolean gap;
        /**
         * No {@code after}: the page starts at the first event kept, wherever that is; the range's
         * oldest may be behind it (a shared history trimmed after this node last looked).
         */
        boolean fromOldest;

        Page(JsonGenerator g, String epoch, long from, int limit) {
            this.g = g;
            this.epoch = epoch;
            this.last = from;
            this.limit = limit;
        }

        boolean full() {
            return count >= limit || bytes >= PAGE_BYTES || gap;
        }

        @Override
        public void accept(long seq, long ts, byte[] data) {
            if (full() || seq <= last) {
                return; // read in steps: what a step passes beyond the page is read again next time
            }
            if (seq != last + 1 && !(fromOldest && count == 0)) {
                gap = true;
                return;
            }
            try {
                g.writeStartObject();
                g.writeStringField("id", epoch + '-' + seq);
                g.writeNumberField("ts", ts);
                g.writeFieldName("data");
                g.writeRawValue(new String(data, StandardCharsets.UTF_8)); // compact JSON, as published
                g.writeEndObject();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            last = seq;
            count++;
            bytes += data.length;
        }
    }

    /**
     * Writes one page into a buffer, reading step by step; when a read is not at hand it fetches
     * and goes on, on the connection's event loop, when the events are back.
     */
    private final class PageWriter {
        private final ChannelHandlerContext ctx;
        private final EventHistory history;
        private final String topic;
        private final String epoch;
        private final int limit;
        private final TopicRange range;
        private final EventId after;
        private final ByteBuf body;
        private final JsonGenerator g;
        private final Page page;
        final CompletableFuture<FullHttpResponse> answer = new CompletableFuture<>();
        /** A fetch was asked for: the rest runs later, on the event loop. */
        private boolean waited;

        PageWriter(ChannelHandlerContext ctx, EventHistory history, String topic, String epoch, long from, int limit,
                   TopicRange range, EventId after) {
            this.ctx = ctx;
            this.history = history;
            this.topic = topic;
            this.epoch = epoch;
            this.limit = limit;
            this.range = range;
            this.after = after;
            this.body = ctx.alloc().buffer();
            try {
                g = ProtocolCodec.mapper().getFactory().createGenerator((OutputStream) new ByteBufOutputStream(body));
                g.writeStartObject();
                g.writeStringField("topic", topic);
                g.writeStringField("epoch", epoch);
                g.writeArrayFieldStart("events");
            } catch (IOException | RuntimeException e) {
                body.release();
                throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
            }
            page = new Page(g, epoch, from, limit);
            page.fromOldest = after == null;
        }

        void run() {
            try {
                while (!page.full()) {
                    int step = Math.min(READ_STEP, limit - page.count);
                    int read = history.read(topic, epoch, page.last, step, page);
                    if (read == EventHistory.EPOCH_CHANGED) {
                        restart();
                        return;
                    }
                    if (read == EventHistory.NOT_AT_HAND) {
                        waited = true;
                        history.fetch(topic, page.last, limit - page.count).whenComplete((fetched, failure) ->
                                ctx.executor().execute(() -> fetched(fetched, failure)));
                        return;
                    }
                    if (read == 0) {
                        break;
                    }
                }
                answer.complete(finish());
            } catch (IOException | RuntimeException e) {
                fail(e);
            }
        }

        private void fetched(EventHistory.Fetched fetched, Throwable failure) {
            if (failure != null) {
                fail(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
                return;
            }
            if (!fetched.epoch().equals(epoch)) {
                restart();
                return;
            }
            try {
                fetched.forEach(page);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            if (fetched.size() == 0 && !page.full()) {
                page.gap = page.last < history.range(topic).head(); // nothing more kept: say so rather than loop
            }
            run();
        }

        /** The topic's history was replaced meanwhile: none of this page goes out; start again in the new epoch. */
        private void restart() {
            try {
                g.close(); // gives its recycled buffer back; what it wrote goes with the body
            } catch (IOException ignored) {
                // writing to a ByteBuf does not fail
            }
            body.release();
            try {
                page(ctx, topic, after, limit).whenComplete((res, e) -> answer.complete(e == null ? res : unavailable()));
            } catch (RuntimeException e) {
                answer.complete(unavailable());
            }
        }

        private FullHttpResponse finish() throws IOException {
            g.writeEndArray();
            long head = Math.max(range.head(), page.last);
            // more after this page: continue after its last event; else null, the page reached the head
            boolean more = page.count > 0 && page.last < history.range(topic).head() && !page.gap;
            g.writeStringField("next", more ? epoch + '-' + page.last : null);
            g.writeStringField("head", epoch + '-' + head);
            g.writeEndObject();
            g.close();
            if (page.gap) { // retention dropped what followed 'after' between the check and the read
                body.release();
                return reset(topic, epoch, history.range(topic), ResetReason.EXPIRED);
            }
            FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            res.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            res.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
            HttpUtil.setContentLength(res, body.readableBytes());
            return res;
        }

        /**
         * Before any fetch the failure goes up as it always did (the handler answers 500); after one,
         * the answer is awaited by the connection, so it gets 503 with Retry-After (Redis away).
         */
        private void fail(Throwable e) {
            if (body.refCnt() > 0) {
                body.release();
            }
            if (!waited) {
                throw e instanceof RuntimeException re ? re : new UncheckedIOException((IOException) e);
            }
            answer.complete(unavailable());
        }
    }

    /** 503 JSON with Retry-After: the shared history could not be read (Redis away); the client retries. */
    private static FullHttpResponse unavailable() {
        return HttpResponses.withRetryAfter(HttpResponses.error(HttpResponseStatus.SERVICE_UNAVAILABLE,
                ErrorCodes.NOT_ACCEPTING, "the history could not be read now; retry later"));
    }
}
