package io.pushd.server.pipeline;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.ChannelDuplexHandler;

/**
 * The one owner of a connection's {@code autoRead}: reading is paused while any {@link Reason}
 * holds, and resumes when the last one is lifted. Without it a peer that sends but never reads
 * (pipelined {@code GET /metrics}, a ping flood) makes the server queue answers without bound.
 * Per connection, at the head of the pipeline; touched only on its event loop.
 *
 * <p>Once reading pauses, the read in progress still ends: what was already decoded from it is
 * handled (at most one socket read, 64 KiB), nothing more is read until the peer catches up.
 * Explicit {@code read()} calls are held back too: Netty's WebSocket protocol handler asks for
 * one after every ping it answers when autoRead is off, which would let a ping flood through.
 */
final class BackpressureHandler extends ChannelDuplexHandler {

    /** Why reading is paused; each is set and lifted by its owner. */
    enum Reason {
        /** The outbound buffer is over the high water mark: the peer is not reading what we send. */
        UNWRITABLE,
        /** HTTP requests wait behind an unanswered one (a publish), answered in order. */
        REQUESTS_QUEUED
    }

    private Channel channel;
    private int reasons;
    private long lastResumedNanos = System.nanoTime();

    /** The handler of {@code ch}'s pipeline, or null when there is none (handler tests). */
    static BackpressureHandler of(Channel ch) {
        return ch.pipeline().get(BackpressureHandler.class);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    void pause(Reason r) {
        boolean wasReading = reasons == 0;
        reasons |= 1 << r.ordinal();
        if (wasReading && !inputShutdown()) {
            channel.config().setAutoRead(false);
        }
    }

    /**
     * Nothing more to read: the peer ended its side. Reading is then left alone (epoll no longer
     * watches the input, and turning autoRead back on fails with ENOENT).
     */
    private boolean inputShutdown() {
        return channel instanceof DuplexChannel d && d.isInputShutdown();
    }

    void resume(Reason r) {
        if (reasons == 0) {
            return;
        }
        reasons &= ~(1 << r.ordinal());
        if (reasons == 0) {
            lastResumedNanos = System.nanoTime();
            if (!inputShutdown()) {
                channel.config().setAutoRead(true);
            }
        }
    }

    boolean isPaused() {
        return reasons != 0;
    }

    /** True when reading is paused now or was paused at some moment after {@code nanos}. */
    boolean pausedSince(long nanos) {
        return reasons != 0 || lastResumedNanos - nanos > 0;
    }

    /**
     * The peer ended its side (half-closure is allowed for HTTP's sake): an HTTP connection
     * closes after its answers ({@link HttpApiHandler}); a WebSocket or an event stream, which
     * has nothing left to answer, closes now, as it did before half-closure was allowed.
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent && ctx.pipeline().get(HandlerNames.HTTP_API) == null) {
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        if (reasons == 0) {
            ctx.read();
        } // else resume() turns autoRead back on, which reads again
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            resume(Reason.UNWRITABLE);
        } else {
            pause(Reason.UNWRITABLE);
        }
        ctx.fireChannelWritabilityChanged();
    }
}
