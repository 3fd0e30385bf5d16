package io.pushd.server.session;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.LiveBatch;

/**
 * Where a {@link Session} and its subscriptions write: one implementation per transport. The
 * session decides what to say (events, {@code subscribed}, {@code reset}, {@code error}, when to
 * close and with which code); the sink only knows how that looks on its wire.
 *
 * <p>The WebSocket sink writes events and messages as text frames, and {@link #close} is the
 * closing handshake (one Close frame with the code, {@code retryMs=…} as its reason). The
 * server-sent-events sink ({@code sse/SseSink}) writes SSE messages, and closes by writing
 * {@code retry: <retryMs>} and {@code event: close} and ending the response; such a stream cannot
 * receive client messages, so its session only ever subscribes from the request, and {@code error}
 * messages (answers to client messages) never occur on it.
 *
 * <p>Threads: every method except {@link #close} is called on {@link #eventLoop()}; {@link #close}
 * may be called from any thread (the drain calls it from its own).
 */
public interface SessionSink {

    /** A short name of the connection, the first thing on every log line about it. */
    String id();

    /** The transport's name for metrics: {@code websocket} or {@code sse}. */
    default String transport() {
        return "websocket";
    }

    /** The event loop the session, its subscriptions and this sink run on. */
    EventLoop eventLoop();

    /** The allocator for buffers this sink writes (replayed events). */
    ByteBufAllocator alloc();

    /**
     * How this transport encodes an event; the topic hub encodes each live event once per format
     * and shares that buffer between every subscriber of the format.
     */
    EventFormat format();

    /** Queues an event encoded in {@link #format()}; takes ownership of {@code encodedEvent}. */
    void sendEvent(ByteBuf encodedEvent);

    /**
     * True when a replay may hand {@link #sendEvent(ByteBuf)} many events of one topic appended
     * to one buffer ({@link EventFormat#appendable}); false when this transport needs each
     * replayed event alone, with its topic and sequence ({@link #sendEvent(String, long, ByteBuf)}).
     */
    default boolean replaysAppended() {
        return format().appendable();
    }

    /**
     * Queues event {@code seq} of {@code topic}; a transport whose framing names the position
     * (an SSE stream's cursor) overrides this. Takes ownership of {@code encodedEvent}.
     */
    default void sendEvent(String topic, long seq, ByteBuf encodedEvent) {
        sendEvent(encodedEvent);
    }

    /**
     * Writes and flushes live events {@code from} (inclusive) to {@code to} (exclusive) of
     * {@code topic}, consecutive ones, from a batch that lends their buffers for this call (see
     * {@link LiveBatch}): a transport that cannot write them at once takes its own references.
     * Returns false when it wrote nothing because the connection is closing.
     */
    default boolean sendLive(String topic, LiveBatch events, int from, int to) {
        for (int i = from; i < to; i++) {
            sendEvent(topic, events.seq(i), events.event(i).retainedDuplicate());
        }
        flush();
        return true;
    }

    /** Queues a {@code subscribed}, {@code reset} or {@code error} message. */
    void send(ServerMessage message);

    /** Writes out what was queued. */
    void flush();

    /** False while the peer does not keep up; the session stops writing live events then. */
    boolean isWritable();

    /** True until the connection is gone. */
    boolean isActive();

    /** True once {@link #close} was called: nothing the client says matters any more. */
    boolean isClosing();

    /**
     * Ends the session with this code and reason (a reason made by {@link CloseCode#retryReason}
     * carries the retry hint). Only the first call counts; may be called from any thread.
     */
    void close(CloseCode code, String reason);

    /** Drops the connection at once, without a close handshake (the server is stopping). */
    void abort();
}
