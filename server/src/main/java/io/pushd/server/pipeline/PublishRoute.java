package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ProtocolException;
import io.netty.util.NetUtil;
import io.pushd.server.auth.AccessDecision;
import io.pushd.server.history.NotDurableException;
import io.pushd.server.store.StorageFullException;
import io.pushd.server.history.Publisher;
import io.pushd.server.history.TopicLimitException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;

/** {@code POST /v1/topics/{topic}/events}: checks the request, hands the event to the publisher. */
final class PublishRoute {

    /** Space comes back by an operator or by retention, not within a second. */
    private static final String STORAGE_RETRY_AFTER_SECONDS = "5";
    private static final int MAX_KEY_LENGTH = 200;

    private final ServerContext server;

    PublishRoute(ServerContext server) {
        this.server = server;
    }

    /**
     * Answers a request that cannot be published at once and returns null; otherwise returns
     * the answer, which completes once the event is stored (or not): on the writer thread, or
     * before this returns when this event loop ran the publish itself (an idle writer).
     */
    CompletionStage<FullHttpResponse> publish(ChannelHandlerContext ctx, FullHttpRequest req, String topic) {
        AccessDecision access = server.sessions().access().publish(req.headers().get(HttpHeaderNames.AUTHORIZATION),
                req.uri(), topic, clientAddress(ctx, req));
        if (!access.allowed()) {
            HttpResponses.reply(ctx, req, AccessAnswers.refusal(access));
            return null;
        }
        String contentType = req.headers().get(HttpHeaderNames.CONTENT_TYPE);
        CharSequence mime = contentType == null ? null : HttpUtil.getMimeType(contentType);
        if (mime == null || !mime.toString().trim().equalsIgnoreCase("application/json")) {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                    ErrorCodes.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"));
            return null;
        }
        String key = req.headers().get("Idempotency-Key");
        if (key != null && !isValidKey(key)) {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST,
                    ErrorCodes.INVALID_IDEMPOTENCY_KEY, "Idempotency-Key must be 1-200 printable ASCII characters"));
            return null;
        }
        byte[] data;
        try {
            byte[] body = new byte[req.content().readableBytes()];
            req.content().getBytes(req.content().readerIndex(), body);
            data = ProtocolCodec.canonicalData(body);
        } catch (ProtocolException e) {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, e.code(), e.getMessage()));
            return null;
        }
        if (!server.lifecycle().isServing()) {
            HttpResponses.reply(ctx, req, HttpResponses.notAccepting());
            return null;
        }
        return server.publisher().publish(topic, data, key)
                .handle((result, failure) -> failure == null ? published(topic, result) : failed(failure));
    }

    /**
     * Who publishes, for {@code security.publishAllowedFrom}: the peer, or the client a trusted
     * proxy names (else a proxy on the same host would make every publisher loopback). Null when
     * that is not an IP address.
     */
    private InetAddress clientAddress(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (server.sessions().access().tokensRequired()) {
            return null; // mode jwt: the token decides, the address does not matter
        }
        String ip = server.clientAddress().resolveAll(ctx.channel().remoteAddress(),
                req.headers().getAll("X-Forwarded-For"));
        byte[] addr = NetUtil.createByteArrayFromIpAddressString(ip); // a literal: never DNS on an event loop
        try {
            return addr == null ? null : InetAddress.getByAddress(addr);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private FullHttpResponse published(String topic, Publisher.Result result) {
        var body = ProtocolCodec.mapper().createObjectNode();
        body.put("topic", topic);
        String epoch = result.epoch() != null ? result.epoch() : server.history().epoch(topic);
        body.put("id", new EventId(epoch, result.seq()).toString());
        return HttpResponses.json(result.created() ? HttpResponseStatus.CREATED : HttpResponseStatus.OK, body);
    }

    static FullHttpResponse failed(Throwable failure) {
        if (failure instanceof RejectedExecutionException) {
            return HttpResponses.notAccepting();
        }
        if (failure instanceof NotDurableException) {
            // not 500 "not stored": it is in the log, and a retry with its key gets the original ID
            return HttpResponses.withRetryAfter(HttpResponses.error(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    ErrorCodes.NOT_DURABLE, "the event may be stored but could not be synced to disk; "
                            + "retry with the same Idempotency-Key to get its ID"));
        }
        if (failure instanceof StorageFullException) {
            // 507: the event was not stored (the disk is full); nothing was acknowledged, retrying is safe
            FullHttpResponse res = HttpResponses.error(HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL,
                    "the event was not stored: the server's disk is full; retry later");
            res.headers().set(HttpHeaderNames.RETRY_AFTER, STORAGE_RETRY_AFTER_SECONDS);
            return res;
        }
        if (failure instanceof TopicLimitException) {
            return HttpResponses.error(HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.TOO_MANY_TOPICS,
                    failure.getMessage());
        }
        return HttpResponses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL,
                "the event was not stored");
    }

    private static boolean isValidKey(String key) {
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }
}
