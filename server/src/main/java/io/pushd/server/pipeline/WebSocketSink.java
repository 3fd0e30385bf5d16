package io.pushd.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionSink;
import io.pushd.server.topic.EventFormat;

/**
 * A session's writes on a WebSocket: every event and message is one text frame, written from
 * the tail of the pipeline; closing is {@link WebSocketClose}'s handshake (one Close frame).
 * Public so that replay tests can run a subscription on an {@code EmbeddedChannel}.
 */
public final class WebSocketSink implements SessionSink {

    private final Channel channel;
    private final ServerMetrics metrics;

    public WebSocketSink(Channel channel, ServerMetrics metrics) {
        this.channel = channel;
        this.metrics = metrics;
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
        return EventFormat.JSON; // the JSON is the text frame's payload as is
    }

    @Override
    public void sendEvent(ByteBuf encodedEvent) {
        channel.write(new TextWebSocketFrame(encodedEvent), channel.voidPromise());
    }

    @Override
    public void send(ServerMessage message) {
        channel.write(new TextWebSocketFrame(ProtocolCodec.encode(message)), channel.voidPromise());
    }

    @Override
    public void flush() {
        channel.flush();
    }

    @Override
    public boolean isWritable() {
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
        WebSocketClose.close(channel, code, reason, metrics);
    }

    @Override
    public void abort() {
        channel.close();
    }
}
