package io.pushd.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.unix.Socket;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionEncoder;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtensionHandler;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionSink;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.LiveBatch;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A session's writes on a WebSocket: every event and message is one text frame; closing is {@link WebSocketClose}'s handshake (one Close frame).
 *
 * <p>Live events on a plain epoll connection go straight to its socket when Netty holds nothing
 * for it ({@link #sendLive}, {@link SocketWrites}); everything else goes through Netty.
 *
 * <p>Events on a connection without permessage-deflate come as whole frames
 * ({@link EventFormat#WEBSOCKET_FRAME}, shared by every subscriber) and are written from the
 * frame encoder's context, below it: no frame object, no encoding and no walk through the
 * {@code ws-*} handlers per subscriber. Messages still go down from the tail as frames; both are
 * written on the event loop, in order. With permessage-deflate every frame is compressed per
 * connection, so events stay payloads ({@link EventFormat#JSON}) and go through the encoders.
 * Public so that replay tests can run a subscription on an {@code EmbeddedChannel}.
 */
public final class WebSocketSink implements SessionSink {

    private final Channel channel;
    private final ServerMetrics metrics;
    /** Fixed once the handshake has installed the frame encoder; null before. */
    private EventFormat format;
    /** The frame encoder's context when {@link #format} is whole frames: where events are written. */
    private ChannelHandlerContext belowEncoder;
    /** With whole frames on a plain epoll connection: the socket live events are written to directly. */
    private Socket socket;
    /**
     * With {@link #socket}: the connection's outbound buffer, kept so that a delivery reads it
     * straight from here rather than through the channel and its unsafe (two objects fewer to
     * reach per subscriber and event). Netty drops its own reference when the output is shut or
     * the connection closed; the socket's state says so then, and is read first.
     */
    private ChannelOutboundBuffer outbound;
    /**
     * Set (by {@link WebSocketClose}, on the event loop) as our close frame is written: from then on
     * nothing goes straight to the socket. The shut output says so too, but only once the close
     * frame's listener has run, which Netty defers to a task when the close comes eight listener
     * notifications deep; a direct write in between would follow the close frame.
     */
    private boolean closeFrameWritten;

    public WebSocketSink(Channel channel, ServerMetrics metrics) {
        this.channel = channel;
        this.metrics = metrics;
    }

    /** The connection written to. */
    public Channel channel() {
        return channel;
    }

    @Override
    public String id() {
        return channel.id().asShortText();
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    @Override
    public ByteBufAllocator alloc() {
        return channel.alloc();
    }

    @Override
    public EventFormat format() {
        if (format != null) {
            return format;
        }
        ChannelPipeline p = channel.pipeline();
        ChannelHandlerContext encoder = p.context(WebSocketFrameEncoder.class);
        if (encoder == null) {
            return EventFormat.JSON; // no handshake yet (or a test channel without codec): payloads
        }
        if (p.get(WebSocketServerExtensionHandler.class) != null || p.get(WebSocketExtensionEncoder.class) != null) {
            format = EventFormat.JSON; // compressed per connection
        } else {
            belowEncoder = encoder;
            Socket s = SocketWrites.socketOf(channel);
            ChannelOutboundBuffer out = s == null ? null : channel.unsafe().outboundBuffer();
            if (out != null) { // null: closed meanwhile, so Netty's way, which knows
                outbound = out; // first: socket non-null means outbound is there
                socket = s;
            }
            format = EventFormat.WEBSOCKET_FRAME;
        }
        return format;
    }

    @Override
    public void sendEvent(ByteBuf encodedEvent) {
        if (belowEncoder != null) {
            belowEncoder.write(encodedEvent, channel.voidPromise());
        } else {
            channel.write(new TextWebSocketFrame(encodedEvent), channel.voidPromise());
        }
    }

    /**
     * Live events go straight to the socket ({@link SocketWrites}) when they can: whole frames, a
     * plain epoll connection and nothing in Netty's outbound buffer they could overtake; what
     * the socket does not take then, and every event otherwise, goes below the frame encoder as
     * {@link #sendEvent} does.
     */
    @Override
    public boolean sendLive(String topic, LiveBatch events, int from, int to) {
        // No direct write once our close frame was written (writesDirectly reads the sink's own
        // flag, not the channel's close state, which is one object further per subscriber);
        // off the direct path the channel's state is asked as well.
        boolean direct = writesDirectly();
        if (!direct && isClosing()) {
            // nothing may follow our close frame (RFC 6455 5.5.1), and the protocol handler that
            // drops later writes is above where events are written
            return false;
        }
        boolean queued = SocketWrites.writeOrQueue(direct ? socket : null, events, from, to, this);
        if (queued) {
            flush();
        }
        return true;
    }

    /**
     * A plain epoll connection, open for output, with no close frame of ours written and nothing
     * in Netty's outbound buffer (queued or being written) that a direct write could overtake.
     * The socket's state before the buffer: closed (which also marks it shut) its descriptor may
     * already be another connection's.
     */
    private boolean writesDirectly() {
        Socket s = socket;
        return s != null && !closeFrameWritten && !s.isOutputShutdown() && outbound.totalPendingWriteBytes() == 0;
    }

    /** Our close frame is being written: nothing goes straight to the socket from now on. Event loop only. */
    void closeFrameWritten() {
        closeFrameWritten = true;
    }

    @Override
    public void send(ServerMessage message) {
        // encoded straight into a pooled buffer: no tree, String or heap copy per message
        ByteBuf payload = channel.alloc().buffer(128);
        boolean encoded = false;
        try {
            ProtocolCodec.encode(message, new ByteBufOutputStream(payload));
            encoded = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!encoded) {
                payload.release(); // whatever failed, an Error included (a stale protocol jar: NoSuchMethodError)
            }
        }
        channel.write(new TextWebSocketFrame(payload), channel.voidPromise());
    }

    @Override
    public void flush() {
        if (belowEncoder != null) {
            belowEncoder.flush(); // nothing above the encoder holds writes back
        } else {
            channel.flush();
        }
    }

    @Override
    public boolean isWritable() {
        Socket s = socket;
        if (s != null) { // as channel.isWritable(), without reaching the buffer through the channel
            return !s.isOutputShutdown() && outbound.isWritable();
        }
        return channel.isWritable();
    }

    @Override
    public boolean isActive() {
        return channel.isActive();
    }

    @Override
    public boolean isClosing() {
        return WebSocketClose.isClosing(channel);
    }

    @Override
    public void close(CloseCode code, String reason) {
        WebSocketClose.close(channel, this, code, reason, metrics);
    }

    @Override
    public void abort() {
        channel.close();
    }
}
