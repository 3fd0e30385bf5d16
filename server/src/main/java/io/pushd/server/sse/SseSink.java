package io.pushd.server.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.unix.Socket;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.FastThreadLocal;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.pipeline.SocketWrites;
import io.pushd.server.session.SessionSink;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.LiveBatch;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's writes on a server-sent-events stream (the body of a {@code GET /v1/sse} answer):
 * every event and message is one SSE message in one HTTP chunk, written and flushed whole, so a
 * proxy never holds half of one. Events carry {@code id:} (the event ID, or for several topics the
 * stream's cursor, see {@link SseCursor}); {@code subscribed} and {@code reset} are named events
 * with the WebSocket JSON. Closing writes {@code retry: N} and {@code event: close} with the code
 * and the hint, ends the response and shuts the output, so the last chunk reaches the client.
 *
 * <p>A single-topic stream on a chunked response gets its events as whole chunks
 * ({@link SseEventFormat#CHUNKED}), the same buffer for every subscriber, and writes them below the
 * HTTP codec: no {@code HttpContent} and no chunk header per subscriber. A replay hands it a read's
 * events in one buffer ({@link #replaysAppended}). A multi-topic stream's events each carry its own
 * cursor line: on a chunked response it builds their chunks itself, the cursor from bytes it keeps
 * ({@link StreamPositions}) and the shared {@code data:} line copied, a batch of them in one
 * buffer written below the codec.
 *
 * <p>Event loop only, except {@link #close}, which hops onto it.
 */
public final class SseSink implements SessionSink {

    private static final Logger log = LoggerFactory.getLogger(SseSink.class);
    /** How long the client may take to hang up after the stream ended before the socket is closed. */
    static final long FORCE_CLOSE_MILLIS = 3_000;
    /** First capacity of a multi-topic replay's chunks buffer: a read of ~100-byte events; it grows. */
    private static final int REPLAYED_CHUNKS_BYTES = 16 * 1024;
    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    /** A loop thread's buffer for a multi-topic stream's chunks on their way straight to its socket. */
    private static final int SCRATCH_BYTES = 64 * 1024;
    private static final FastThreadLocal<ByteBuf> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected ByteBuf initialValue() {
            return Unpooled.directBuffer(SCRATCH_BYTES, SCRATCH_BYTES);
        }

        @Override
        protected void onRemoval(ByteBuf scratch) {
            scratch.release(); // the loop thread ends: its native buffer goes with it
        }
    };

    private final Channel channel;
    private final ServerMetrics metrics;
    private final RetryHints hints;
    private final boolean cursor; // several topics: the id: line is the stream's cursor
    /**
     * A single-topic stream on a chunked response: the HTTP codec's context, below which events
     * (whole chunks, {@link SseEventFormat#CHUNKED}) are written; null: events go through the codec.
     */
    private final ChannelHandlerContext belowCodec;
    /**
     * A multi-topic stream on a chunked response: the HTTP codec's context, below which its own
     * chunks (cursor line and the shared data line) are written; null otherwise.
     */
    private final ChannelHandlerContext cursorBelowCodec;
    /** With either codec context on a plain epoll connection: the socket live events are written to directly. */
    private final Socket socket;
    /** With {@link #socket}: the connection's outbound buffer (see {@code WebSocketSink}'s). */
    private final ChannelOutboundBuffer outbound;
    /**
     * A multi-topic chunked stream's replayed events not yet written: their chunks one after the
     * other, written below the codec as one buffer at the next flush (a replay read's end), or
     * before anything else is written. Never held past the event loop's task that filled it.
     */
    private ByteBuf replayedChunks;
    /** Where each topic of the stream is: what its {@code id:} lines say. */
    private final StreamPositions positions;
    private boolean closing;

    /** A stream whose events go through the pipeline's HTTP codec (or a test channel's end) as {@code HttpContent}. */
    public SseSink(Channel channel, ServerMetrics metrics, RetryHints hints, List<ClientMessage.Subscribe> topics) {
        this(channel, null, metrics, hints, topics);
    }

    /**
     * @param codec the HTTP codec's context when the response is chunked (its events are then
     *              written below it as whole chunks, if the stream has one topic); null otherwise
     */
    public SseSink(Channel channel, ChannelHandlerContext codec, ServerMetrics metrics, RetryHints hints,
                   List<ClientMessage.Subscribe> topics) {
        this.channel = channel;
        this.metrics = metrics;
        this.hints = hints;
        this.cursor = topics.size() > 1;
        this.belowCodec = cursor ? null : codec;
        this.cursorBelowCodec = cursor ? codec : null;
        Socket direct = codec == null ? null : SocketWrites.socketOf(channel);
        ChannelOutboundBuffer out = direct == null ? null : channel.unsafe().outboundBuffer();
        this.outbound = out;
        this.socket = out == null ? null : direct; // null outbound: closed meanwhile, so Netty's way, which knows
        // a live-only topic's position is null until its subscribed says the head
        positions = new StreamPositions(topics.stream().map(ClientMessage.Subscribe::topic).toList(),
                topics.stream().map(ClientMessage.Subscribe::after).toList());
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
    public String transport() {
        return "sse";
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
        return belowCodec != null ? SseEventFormat.CHUNKED : SseEventFormat.INSTANCE;
    }

    /**
     * One topic: a replay read's events go as one buffer (on a chunked stream a chunk per event in
     * it); several topics: each event alone, with its own cursor line (on a chunked stream this
     * sink appends their chunks to one buffer itself, written at the read's flush).
     */
    @Override
    public boolean replaysAppended() {
        return !cursor;
    }

    @Override
    public void sendEvent(ByteBuf encodedEvent) {
        // one topic: the shared id: line is the event ID
        if (belowCodec == null) {
            write(encodedEvent);
        } else if (closing) {
            encodedEvent.release(); // the response has ended: see write
        } else {
            belowCodec.write(encodedEvent, channel.voidPromise()); // whole chunks, after what the codec wrote
        }
    }

    @Override
    public void sendEvent(String topic, long seq, ByteBuf encodedEvent) {
        if (!cursor) {
            sendEvent(encodedEvent);
            return;
        }
        if (cursorBelowCodec != null) {
            try {
                if (closing) {
                    return; // the response has ended: see write
                }
                if (replayedChunks == null) {
                    replayedChunks = channel.alloc().directBuffer(Math.max(REPLAYED_CHUNKS_BYTES,
                            cursorChunkBytes(encodedEvent)));
                }
                appendCursorChunk(replayedChunks, topic, seq, encodedEvent);
            } finally {
                encodedEvent.release();
            }
            return;
        }
        positions.advance(topic, seq);
        // the stream's own id: line, then the shared data: part, as one buffer in one write
        ByteBuf idLine = channel.alloc().directBuffer(ID.length + positions.cursorLength() + 1);
        idLine.writeBytes(ID);
        positions.writeCursor(idLine);
        idLine.writeByte('\n');
        encodedEvent.skipBytes(SseEventFormat.dataOffset(encodedEvent));
        CompositeByteBuf message = channel.alloc().compositeDirectBuffer(2);
        message.addComponents(true, idLine, encodedEvent);
        write(message);
    }

    /**
     * Appends event {@code seq} of {@code topic} as one HTTP chunk with the stream's cursor: the
     * chunk's size line, {@code id: <cursor>}, the data line of {@code encoded} (an
     * {@link SseEventFormat#INSTANCE} message, left as it is) and the chunk's CRLF. The cursor
     * moves to the event first.
     */
    private void appendCursorChunk(ByteBuf out, String topic, long seq, ByteBuf encoded) {
        positions.advance(topic, seq);
        int data = SseEventFormat.dataOffset(encoded);
        int dataLength = encoded.readableBytes() - data;
        int message = ID.length + positions.cursorLength() + 1 + dataLength;
        out.ensureWritable(SseEventFormat.hexDigits(message) + 2 + message + 2);
        SseEventFormat.writeHex(out, message);
        out.writeByte('\r').writeByte('\n');
        out.writeBytes(ID);
        positions.writeCursor(out);
        out.writeByte('\n');
        out.writeBytes(encoded, encoded.readerIndex() + data, dataLength);
        out.writeByte('\r').writeByte('\n');
    }

    /** At least what {@link #appendCursorChunk} takes for {@code encoded}, whatever its sequence. */
    private int cursorChunkBytes(ByteBuf encoded) {
        return 8 + 2 + ID.length + positions.cursorBound() + 1 + encoded.readableBytes() + 2;
    }

    /**
     * Live events of a single-topic chunked stream go straight to the socket when Netty holds
     * nothing for it ({@code SocketWrites}, as on a WebSocket); what the socket does not take
     * then, and every event otherwise, goes below the codec as {@link #sendEvent} does. A
     * multi-topic chunked stream builds its own chunks ({@link #sendLiveWithCursor}).
     */
    @Override
    public boolean sendLive(String topic, LiveBatch events, int from, int to) {
        if (cursorBelowCodec != null) {
            return sendLiveWithCursor(topic, events, from, to);
        }
        if (belowCodec == null) {
            return SessionSink.super.sendLive(topic, events, from, to);
        }
        if (closing) {
            return false; // the response has ended: nothing may follow its last chunk
        }
        if (SocketWrites.writeOrQueue(writesDirectly() ? socket : null, events, from, to, this)) {
            flush();
        }
        return true;
    }

    /** Writes the replayed events' chunks held so far, if any (below the codec, not flushed). */
    private void writeReplayedChunks() {
        ByteBuf chunks = replayedChunks;
        if (chunks != null) {
            replayedChunks = null;
            cursorBelowCodec.write(chunks, channel.voidPromise());
        }
    }

    /**
     * A multi-topic chunked stream's live events: each its own chunk with the stream's cursor,
     * the batch's chunks built one after the other. When Netty holds nothing for the connection
     * they are built in the loop thread's scratch buffer and sent straight to the socket; what it
     * does not take, and otherwise all of them, go below the codec in a buffer of their own.
     */
    private boolean sendLiveWithCursor(String topic, LiveBatch events, int from, int to) {
        if (closing) {
            return false; // the response has ended: nothing may follow its last chunk
        }
        writeReplayedChunks(); // in order (and then Netty holds something: no direct write)
        int bytes = 0;
        for (int i = from; i < to; i++) {
            bytes += cursorChunkBytes(events.event(i));
        }
        boolean direct = bytes <= SCRATCH_BYTES && writesDirectly();
        ByteBuf chunks = direct ? SCRATCH.get().clear() : channel.alloc().directBuffer(bytes);
        try {
            for (int i = from; i < to; i++) {
                appendCursorChunk(chunks, topic, events.seq(i), events.event(i));
            }
        } catch (RuntimeException e) {
            if (!direct) {
                chunks.release();
            }
            throw e;
        }
        if (direct) {
            int sent = SocketWrites.send(socket, chunks);
            int rest = chunks.readableBytes() - sent;
            if (rest == 0) {
                return true;
            }
            // the rest, out of the scratch buffer the next subscriber's chunks are built in
            chunks = channel.alloc().directBuffer(rest).writeBytes(chunks, chunks.readerIndex() + sent, rest);
        }
        cursorBelowCodec.writeAndFlush(chunks, channel.voidPromise());
        return true;
    }

    /**
     * A plain epoll connection, open for output, with nothing in Netty's outbound buffer (queued
     * or being written) that a direct write could overtake. The socket's state before the
     * buffer: closed (which also marks it shut) its descriptor may already be another connection's.
     */
    private boolean writesDirectly() {
        Socket s = socket;
        return s != null && !s.isOutputShutdown() && outbound.totalPendingWriteBytes() == 0;
    }

    @Override
    public void send(ServerMessage message) {
        String event;
        if (message instanceof ServerMessage.Subscribed s) {
            if (!positions.known(s.topic())) {
                // live only: the stream is at the head (<epoch>-0 before a topic's first event)
                positions.set(s.topic(), s.head() != null ? s.head() : new EventId(s.epoch(), 0));
            }
            event = "subscribed";
        } else if (message instanceof ServerMessage.Reset r) {
            positions.set(r.topic(), r.id());
            event = "reset";
        } else {
            event = "error"; // answers to client messages, which an SSE stream cannot send
        }
        String id = message instanceof ServerMessage.Error ? "" : "id: " + positions.text() + '\n';
        writeText("event: " + event + '\n' + id + "data: " + ProtocolCodec.encode(message) + "\n\n");
    }

    /** The first line of every stream: how long the browser waits before it reconnects by itself. */
    void sendRetry(long retryMs) {
        writeText("retry: " + retryMs + "\n\n");
    }

    /** A comment, which keeps balancers from cutting an idle stream. */
    void sendPing() {
        writeText(": ping\n\n");
        flush();
    }

    private void writeText(String text) {
        write(ByteBufUtil.writeUtf8(channel.alloc(), text));
    }

    private void write(ByteBuf message) {
        writeReplayedChunks(); // what was replayed before this goes before it
        if (closing) {
            // the response has ended (or is ending): a live event or replay step still queued
            // behind the close has nowhere to go
            message.release();
            return;
        }
        channel.write(new DefaultHttpContent(message), channel.voidPromise());
    }

    @Override
    public void flush() {
        writeReplayedChunks();
        channel.flush();
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
        return closing;
    }

    /**
     * Ends the stream with {@code event: close} {"code":C,"retryMs":N} after a {@code retry: N}
     * line, N the hint in {@code reason} (or one drawn here for a close without one, such as
     * 1011, and 0 for 4001), so that a plain EventSource comes back after N ms and the client library reads it.
     */
    @Override
    public void close(CloseCode code, String reason) {
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(() -> close(code, reason));
            return;
        }
        if (closing) {
            return;
        }
        OptionalLong hint = CloseCode.parseRetryMs(reason);
        // 4001: a new token and back at once (the client library's rule, which a plain
        // EventSource, whose URL holds the expired token, cannot follow anyway)
        long retryMs = hint.isPresent() ? hint.getAsLong() : code == CloseCode.TOKEN_EXPIRED ? 0 : hints.single();
        metrics.closeSent(code, code.carriesRetryHint() ? retryMs : -1); // the histogram is of 1012/1013 hints
        log.debug("[{}] ending the stream with {} retry {} ms", id(), code.describe(), retryMs);
        writeText("retry: " + retryMs + "\nevent: close\ndata: {\"code\":" + code.code() + ",\"retryMs\":" + retryMs
                + "}\n\n");
        end(); // from here on isClosing() and nothing more is written
    }

    /**
     * Ends the response: the last chunk, then our FIN; the client's FIN (or a timeout) closes the
     * socket. The timeout runs from now, not from when the last chunk is out: a client that does
     * not read (the slow-consumer guard's case) never lets that write complete, and would keep
     * the connection, its admission slot and its queued bytes for good.
     */
    void end() {
        if (closing) {
            return;
        }
        writeReplayedChunks(); // before the last chunk
        closing = true;
        channel.eventLoop().schedule(() -> channel.close(), FORCE_CLOSE_MILLIS, TimeUnit.MILLISECONDS);
        channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(done -> {
            if (!done.isSuccess() || !(channel instanceof DuplexChannel duplex) || !channel.isActive()) {
                channel.close();
                return;
            }
            duplex.shutdownOutput();
            channel.config().setAutoRead(true); // see the client's FIN even if reading was paused
        });
    }

    @Override
    public void abort() {
        if (replayedChunks != null) {
            replayedChunks.release();
            replayedChunks = null;
        }
        channel.close();
    }
}
