package io.pushd.server.replay;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionSink;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.TopicHub;
import java.util.function.Consumer;

/**
 * One topic followed by one session: replays kept events after the requested ID, then hands
 * over to live events with no gap and no duplicate. It writes through the session's
 * {@link SessionSink}, so it works the same on every transport.
 *
 * <p>Everything runs on the sink's event loop. The rule that makes the hand-off exactly-once: a
 * live event is written only when its sequence is exactly {@code lastSeq + 1}; an older one is a
 * duplicate and dropped; a newer one (or any while catching up, or while the sink is not
 * writable) means "read from the store", which already holds it because the writer appends before
 * it fans out. So a slow reader falls back to the store instead of growing its outbound buffer.
 */
public final class TopicSubscription implements TopicHub.Subscriber {

    /** Events read from the store per step before the event loop is given back. */
    static final int REPLAY_STEP = 64;

    private enum Mode { LIVE, CATCHING_UP, CLOSED }

    private final String topic;
    private final SessionSink sink;
    /** The topic's kept events: the one place this class reads history. */
    private final EventHistory history;
    private final TopicHub hub;
    private final ServerMetrics metrics;
    private final Consumer<RuntimeException> onFailure;
    private Mode mode = Mode.LIVE;
    private long lastSeq;
    /** The epoch {@link #lastSeq} belongs to; a shared history can replace a topic's (see {@link #epochChanged}). */
    private String epoch;
    private boolean stepScheduled;
    /** Live events written since the hub's last {@link #endOfBatch()}, and their message bytes (counted then, once). */
    private int unflushed;
    private long unflushedBytes;
    /** While a replay read runs with an appendable format: the events read so far, one buffer. */
    private ByteBuf replayed;
    /** The frames in {@link #replayed} and their message bytes, counted when it is sent. */
    private int replayedFrames;
    private long replayedBytes;
    private String replayEpoch;

    /**
     * @param onFailure told (after this subscription stopped) when it cannot go on, so the session
     *                  closes rather than go quiet
     */
    public TopicSubscription(String topic, SessionSink sink, EventHistory history, TopicHub hub, ServerMetrics metrics,
                             Consumer<RuntimeException> onFailure) {
        this.topic = topic;
        this.sink = sink;
        this.history = history;
        this.hub = hub;
        this.metrics = metrics;
        this.onFailure = onFailure;
    }

    /**
     * Registers for live events, then sends {@code subscribed}, a {@code reset} when the request
     * cannot be replayed completely, and starts the replay. Event loop only.
     */
    public void start(EventId after) {
        hub.subscribe(topic, this); // before reading the head: nothing published from now on is missed
        metrics.subscribed();
        TopicRange range = history.range(topic);
        String epoch = history.epoch(topic);
        this.epoch = epoch;
        // id: where this subscription starts. The requested ID even when a reset follows, so a
        // client that stores every frame's id and drops here is told about the reset again.
        EventId position = after != null ? after : new EventId(epoch, range.head());
        sink.send(new ServerMessage.Subscribed(topic, range.headId(epoch), range.oldestId(epoch), epoch, position));
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
        sink.flush();
    }

    @Override
    public EventExecutor executor() {
        return sink.eventLoop();
    }

    @Override
    public EventFormat format() {
        return sink.format();
    }

    @Override
    public void onLive(long seq, ByteBuf encodedEvent) {
        try {
            handleLive(seq, encodedEvent);
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void handleLive(long seq, ByteBuf encodedEvent) {
        if (epochChanged()) {
            encodedEvent.release();
            return;
        }
        if (mode == Mode.LIVE && seq == lastSeq + 1 && sink.isWritable()) {
            lastSeq = seq;
            unflushedBytes += sink.format().payloadBytes(encodedEvent.readableBytes());
            sink.sendEvent(topic, seq, encodedEvent); // SSE: a multi-topic stream's cursor names the topic
            unflushed++; // flushed once per batch of live events, by endOfBatch
            return;
        }
        encodedEvent.release();
        if (mode == Mode.CLOSED || seq <= lastSeq) {
            return; // a duplicate of what the replay already sent
        }
        mode = Mode.CATCHING_UP;
        scheduleStep();
    }

    @Override
    public void endOfBatch() {
        if (unflushed > 0) {
            metrics.delivered(unflushed, unflushedBytes, false);
            unflushed = 0;
            unflushedBytes = 0;
            sink.flush();
        }
    }

    /** The sink became writable again: continue a paused replay. */
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
            sink.eventLoop().execute(this::step);
        }
    }

    /** One bounded slice of replay; gives the event loop back between slices. */
    private void step() {
        stepScheduled = false;
        if (mode != Mode.CATCHING_UP || !sink.isActive()) {
            return;
        }
        try {
            catchUp();
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    /**
     * A subscription that cannot go on must not go quiet: stop it and let the session close
     * (1011), so the client reconnects and resumes from its last ID.
     */
    private void fail(RuntimeException e) {
        close();
        onFailure.accept(e);
    }

    private void catchUp() {
        if (epochChanged()) {
            return;
        }
        TopicRange range = history.range(topic);
        if (isLost(lastSeq, range)) {
            sendReset(ResetReason.EXPIRED, range.head()); // retention overtook a slow reader
        }
        int n = 0;
        EventFormat format = sink.format();
        replayEpoch = history.epoch(topic);
        while (sink.isWritable()) {
            int read;
            if (format.appendable()) {
                try {
                    read = history.readData(topic, lastSeq, REPLAY_STEP, this::appendReplayed);
                } finally {
                    sendReplayed();
                }
            } else {
                read = history.read(topic, lastSeq, REPLAY_STEP, this::writeReplayed);
            }
            n += read;
            if (read < REPLAY_STEP || n >= REPLAY_STEP * 4) {
                break;
            }
        }
        sink.flush();
        if (lastSeq >= history.range(topic).head()) {
            mode = Mode.LIVE; // the events after this arrive as live offers, queued behind this task
        } else if (sink.isWritable()) {
            scheduleStep();
        }
        // else: onWritable() resumes
    }

    private void writeReplayed(long seq, long ts, byte[] data) {
        if (!nextReplayed(seq)) {
            return;
        }
        ByteBuf event = sink.format().encode(sink.alloc(), topic, new EventId(replayEpoch, seq), ts, data);
        metrics.delivered(sink.format().payloadBytes(event.readableBytes()), true);
        sink.sendEvent(topic, seq, event);
    }

    /**
     * Whole frames: the events of one read go out as one buffer, encoded in place from the store's
     * bytes (no {@code byte[]} and no write through the pipeline per event).
     */
    private void appendReplayed(long seq, long ts, EventHistory.EventData data) {
        if (!nextReplayed(seq)) {
            return;
        }
        if (replayed == null) {
            replayed = sink.alloc().directBuffer(REPLAY_STEP * (data.length() + topic.length() + 96));
        }
        int before = replayed.writerIndex();
        try {
            sink.format().append(replayed, topic, replayEpoch, seq, ts, data);
        } catch (RuntimeException e) {
            replayed.writerIndex(before); // never half a frame on the wire: the frames before it still go
            throw e;
        }
        replayedFrames++;
        replayedBytes += sink.format().payloadBytes(replayed.writerIndex() - before);
    }

    private void sendReplayed() {
        if (replayed != null) {
            ByteBuf b = replayed;
            replayed = null;
            metrics.delivered(replayedFrames, replayedBytes, true);
            replayedFrames = 0;
            replayedBytes = 0;
            sink.sendEvent(b);
        }
    }

    /** True when {@code seq} is the next event to send (after a reset for a hole retention made). */
    private boolean nextReplayed(long seq) {
        if (seq > lastSeq + 1) {
            // Retention dropped events between two reads: say so rather than skip them.
            sendReset(ResetReason.EXPIRED, history.range(topic).head());
        }
        if (seq <= lastSeq) {
            return false;
        }
        lastSeq = seq;
        return true;
    }

    /**
     * A shared history lost the topic's history and gave it a new epoch (Redis came back with less
     * than was seen): nothing of the old epoch continues, so say {@code unknown_epoch} at the new
     * epoch's start and replay it from there. The local history never changes an epoch while running.
     */
    private boolean epochChanged() {
        String now = history.epoch(topic);
        if (now.equals(epoch) || mode == Mode.CLOSED) {
            return false;
        }
        epoch = now;
        sendReset(ResetReason.UNKNOWN_EPOCH, 0);
        sink.flush();
        mode = Mode.CATCHING_UP;
        scheduleStep();
        return true;
    }

    private void sendReset(ResetReason reason, long head) {
        sendReplayed(); // the events before the reset go first
        metrics.reset(reason);
        sink.send(new ServerMessage.Reset(topic, new EventId(history.epoch(topic), head), reason));
        lastSeq = head;
    }

    /** True when events after {@code seq} are no longer all kept. */
    private static boolean isLost(long seq, TopicRange range) {
        if (seq >= range.head()) {
            return false;
        }
        return range.oldest() == 0 || seq < range.oldest() - 1;
    }
}
