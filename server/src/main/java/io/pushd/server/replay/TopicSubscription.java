package io.pushd.server.replay;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ResetReason;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import io.pushd.server.topic.TopicHub;

/**
 * One topic followed by one connection: replays kept events after the requested ID, then hands
 * over to live events with no gap and no duplicate.
 *
 * <p>Everything runs on the channel's event loop. The rule that makes the hand-off exact: a live
 * frame is written only when its sequence is exactly {@code lastSeq + 1}; an older one is a
 * duplicate and dropped; a newer one (or any while catching up, or while the channel is not
 * writable) means "read from the store", which already holds it because the writer appends before
 * it fans out. So a slow reader falls back to the store instead of growing its outbound buffer.
 */
public final class TopicSubscription implements TopicHub.Subscriber {

    /** Events read from the store per step before the event loop is given back. */
    static final int REPLAY_STEP = 64;

    private enum Mode { LIVE, CATCHING_UP, CLOSED }

    private final String topic;
    private final Channel channel;
    private final EventHistory store;
    private final TopicHub hub;
    private final ServerMetrics metrics;
    private Mode mode = Mode.LIVE;
    private long lastSeq;
    private boolean stepScheduled;

    public TopicSubscription(String topic, Channel channel, EventHistory store, TopicHub hub, ServerMetrics metrics) {
        this.topic = topic;
        this.channel = channel;
        this.store = store;
        this.hub = hub;
        this.metrics = metrics;
    }

    public String topic() {
        return topic;
    }

    /**
     * Registers for live events, then sends {@code subscribed}, a {@code reset} when the request
     * cannot be replayed completely, and starts the replay. Event loop only.
     */
    public void start(EventId after) {
        hub.subscribe(topic, this); // before reading the head: nothing published from now on is missed
        metrics.subscribed();
        TopicRange range = store.range(topic);
        String epoch = store.epoch(topic);
        write(ProtocolCodec.encode(new ServerMessage.Subscribed(topic, range.headId(epoch), range.oldestId(epoch),
                epoch)));
        lastSeq = range.head();
        if (after != null) {
            ResetReason reset = null;
            if (!after.epoch().equals(epoch)) {
                reset = ResetReason.UNKNOWN_EPOCH;
            } else if (after.seq() > range.head()) {
                reset = ResetReason.FUTURE;
            } else if (isLost(after.seq(), range)) {
                reset = ResetReason.EXPIRED;
            } else {
                lastSeq = after.seq();
            }
            if (reset != null) {
                sendReset(reset, range.head());
            }
        }
        if (lastSeq < range.head()) {
            mode = Mode.CATCHING_UP;
            scheduleStep();
        }
        channel.flush();
    }

    @Override
    public EventExecutor executor() {
        return channel.eventLoop();
    }

    @Override
    public void onLive(long seq, ByteBuf eventFrame) {
        try {
            handleLive(seq, eventFrame);
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void handleLive(long seq, ByteBuf eventFrame) {
        if (mode == Mode.LIVE && seq == lastSeq + 1 && channel.isWritable()) {
            lastSeq = seq;
            metrics.delivered(eventFrame.readableBytes(), false);
            channel.writeAndFlush(new TextWebSocketFrame(eventFrame), channel.voidPromise());
            return;
        }
        eventFrame.release();
        if (mode == Mode.CLOSED || seq <= lastSeq) {
            return; // a duplicate of what the replay already sent
        }
        mode = Mode.CATCHING_UP;
        scheduleStep();
    }

    /** The channel became writable again: continue a paused replay. */
    public void onWritable() {
        if (mode == Mode.CATCHING_UP) {
            scheduleStep();
        }
    }

    public void close() {
        if (mode != Mode.CLOSED) {
            mode = Mode.CLOSED;
            hub.unsubscribe(topic, this);
            metrics.unsubscribed();
        }
    }

    private void scheduleStep() {
        if (!stepScheduled && mode == Mode.CATCHING_UP) {
            stepScheduled = true;
            channel.eventLoop().execute(this::step);
        }
    }

    /** One bounded slice of replay; gives the event loop back between slices. */
    private void step() {
        stepScheduled = false;
        if (mode != Mode.CATCHING_UP || !channel.isActive()) {
            return;
        }
        try {
            catchUp();
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    /**
     * A subscription that cannot go on must not go quiet: stop it and let the connection close
     * (1011), so the client reconnects and resumes from its last ID.
     */
    private void fail(RuntimeException e) {
        close();
        channel.pipeline().fireExceptionCaught(e);
    }

    private void catchUp() {
        TopicRange range = store.range(topic);
        if (isLost(lastSeq, range)) {
            sendReset(ResetReason.EXPIRED, range.head()); // retention overtook a slow reader
        }
        int n = 0;
        while (channel.isWritable()) {
            int read = store.read(topic, lastSeq, REPLAY_STEP, this::writeReplayed);
            n += read;
            if (read < REPLAY_STEP || n >= REPLAY_STEP * 4) {
                break;
            }
        }
        channel.flush();
        if (lastSeq >= store.range(topic).head()) {
            mode = Mode.LIVE; // the events after this arrive as live offers, queued behind this task
        } else if (channel.isWritable()) {
            scheduleStep();
        }
        // else: onWritable() resumes
    }

    private void writeReplayed(long seq, long ts, byte[] data) {
        if (seq > lastSeq + 1) {
            // Retention dropped events between two reads: say so rather than skip them.
            sendReset(ResetReason.EXPIRED, store.range(topic).head());
        }
        if (seq <= lastSeq) {
            return;
        }
        lastSeq = seq;
        byte[] frame = ProtocolCodec.encodeEvent(topic, new EventId(store.epoch(topic), seq), ts, data);
        ByteBuf buf = channel.alloc().directBuffer(frame.length).writeBytes(frame);
        metrics.delivered(frame.length, true);
        channel.write(new TextWebSocketFrame(buf), channel.voidPromise());
    }

    private void sendReset(ResetReason reason, long head) {
        metrics.reset(reason);
        write(ProtocolCodec.encode(new ServerMessage.Reset(topic, new EventId(store.epoch(topic), head), reason)));
        lastSeq = head;
    }

    private void write(String json) {
        channel.write(new TextWebSocketFrame(json), channel.voidPromise());
    }

    /** True when events after {@code seq} are no longer all kept. */
    private static boolean isLost(long seq, TopicRange range) {
        if (seq >= range.head()) {
            return false;
        }
        return range.oldest() == 0 || seq < range.oldest() - 1;
    }
}
