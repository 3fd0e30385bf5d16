package io.pushd.server.sse;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.protocol.ClientMessage;
import io.pushd.server.auth.Grant;
import io.pushd.server.session.Session;
import io.pushd.server.session.SessionContext;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SSE adapter of a {@link Session}, added once the {@code 200 text/event-stream} head is
 * out: writes the stream's jittered {@code retry:} first, opens the session (which admits it or
 * ends the stream with {@code event: close} and a hint), and sends {@code : ping} comments every
 * {@code heartbeat.sseInterval}. SSE is one-way: whatever the client sends after its request (a
 * pipelined request, stray bytes) ends the stream. Per connection, event loop only.
 */
public final class SseSessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(SseSessionHandler.class);

    private final SessionContext context;
    private final Duration pingInterval;
    private final String clientIp;
    private final List<ClientMessage.Subscribe> topics;
    private final Grant grant;
    private final boolean chunked;
    private SseSink sink;
    private Session session;
    private ScheduledFuture<?> pinger;

    /**
     * @param grant   what the request's token allows (null when access control is off)
     * @param chunked the response is chunked (HTTP/1.1), so events may be written as whole chunks below the codec
     */
    public SseSessionHandler(SessionContext context, Duration pingInterval, String clientIp, Grant grant,
                             List<ClientMessage.Subscribe> topics, boolean chunked) {
        this.context = context;
        this.chunked = chunked;
        this.grant = grant;
        this.pingInterval = pingInterval;
        this.clientIp = clientIp;
        this.topics = topics;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        sink = new SseSink(ctx.channel(), chunked ? ctx.pipeline().context(HttpServerCodec.class) : null,
                context.metrics(), context.hints(), topics);
        session = new Session(sink, context);
        sink.sendRetry(context.hints().streamRetry());
        if (session.open(clientIp, grant, topics)) {
            long every = pingInterval.toNanos();
            pinger = ctx.executor().scheduleAtFixedRate(this::ping, every, every, TimeUnit.NANOSECONDS);
        }
        sink.flush();
        if (!ctx.channel().isActive()) {
            session.onDisconnected(); // gone before we were added: channelInactive will not come
        }
    }

    private void ping() {
        // a stream that does not drain gets nothing more: the slow-consumer guard decides about it
        if (!sink.isClosing() && sink.isWritable()) {
            sink.sendPing();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            boolean nothing = msg == LastHttpContent.EMPTY_LAST_CONTENT
                    || msg instanceof HttpContent c && !c.content().isReadable();
            if (!nothing && !sink.isClosing()) {
                log.debug("[{}] the client sent something on a one-way stream; ending it", sink.id());
                sink.end();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        session.onWritabilityChanged();
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (pinger != null) {
            pinger.cancel(false);
        }
        session.onDisconnected();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("[{}] {}", sink.id(), cause.toString()); // a reset: the client's doing
            ctx.close();
        } else {
            session.fail(cause);
        }
    }
}
