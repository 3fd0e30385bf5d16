package io.pushd.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.epoll.AbstractEpollStreamChannel;
import io.netty.channel.epoll.EpollSocketChannelConfig;
import io.netty.channel.unix.IovArray;
import io.netty.channel.unix.Socket;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.PlatformDependent;
import io.pushd.server.session.SessionSink;
import io.pushd.server.topic.LiveBatch;
import java.io.IOException;

/**
 * Live events written straight to a connection's socket, below Netty's outbound buffer: one
 * {@code write}/{@code writev} of the batch's shared buffers, with no buffer object, reference
 * count, outbound-buffer entry or pipeline walk per subscriber — most of what a delivery cost in
 * Java (see the README's Performance section). Only for a plain epoll connection whose outbound
 * buffer is empty, so nothing Netty holds can be overtaken; what the socket does not take goes
 * through Netty after all.
 *
 * <p>Per event loop thread, what several events of a batch are written from is built once and
 * serves every subscriber of the task: the events copied one after the other into one buffer, so
 * each subscriber's write is one {@code send} (a {@code writev} costs the VFS layer on top, ~6 %
 * of the CPU of a batched fan-out in a profile), or, for a batch too big to copy, I/O vectors
 * pointing at the events' own buffers.
 */
public final class SocketWrites {

    /**
     * What one batch is written from, built on a loop thread once per batch for all the
     * subscribers of its task: the events copied one after the other, event {@code i} at
     * {@code offsets[i]}..{@code offsets[i + 1]}; or, for a batch too big to copy, I/O vectors
     * pointing at the events' own buffers, entry {@code i} for event {@code i}.
     */
    private static final class Prepared {
        static final int NONE = 0;
        static final int JOINED = 1;
        static final int VECTORS = 2;

        final ByteBuf joined = Unpooled.directBuffer(JOINED_BYTES, JOINED_BYTES);
        final int[] offsets = new int[CAPACITY + 1];
        final IovArray iov = new IovArray(Unpooled.directBuffer(CAPACITY * IovArray.IOV_SIZE));
        /** The generation {@link #how} and the buffers were prepared for; 0: none (generations start at 1). */
        long generation;
        /** How the batch of {@link #generation} is written: {@link #NONE} when some event cannot be written directly. */
        int how;

        void prepare(LiveBatch events) {
            if (generation == events.generation()) { // unique across batches (LiveBatch)
                return;
            }
            generation = events.generation();
            how = join(events) ? JOINED : vectors(events) ? VECTORS : NONE;
        }

        private boolean join(LiveBatch events) {
            joined.clear();
            if (events.size() > CAPACITY) {
                return false;
            }
            for (int i = 0; i < events.size(); i++) {
                ByteBuf b = events.event(i);
                int length = b.readableBytes();
                if (!directlyWritable(b) || length > joined.writableBytes()) {
                    return false;
                }
                joined.writeBytes(b, b.readerIndex(), length); // the lent buffer's indices stay as they are
                offsets[i + 1] = joined.writerIndex();
            }
            return true;
        }

        private boolean vectors(LiveBatch events) {
            iov.clear();
            iov.maxCount(CAPACITY); // after clear(), which resets it: a longer batch is refused (add returns false)
            for (int i = 0; i < events.size(); i++) {
                ByteBuf b = events.event(i);
                if (!directlyWritable(b) || !iov.add(b, b.readerIndex(), b.readableBytes())) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Events of one batch at most: more than a fan-out task's (16). */
    private static final int CAPACITY = 64;
    /**
     * Bytes a batch may take to be copied: several 100-byte events take a few hundred, a batch
     * of big ones (a publish may carry up to {@code limits.maxPublishBytes}) is written from their
     * own buffers.
     */
    private static final int JOINED_BYTES = 64 * 1024;

    private static final FastThreadLocal<Prepared> PREPARED = new FastThreadLocal<>() {
        @Override
        protected Prepared initialValue() {
            return new Prepared();
        }

        @Override
        protected void onRemoval(Prepared p) {
            p.joined.release(); // the loop thread ends: its native buffers go with it
            p.iov.release();
        }
    };

    private SocketWrites() {
    }

    /**
     * The socket to write {@code ch}'s live events to directly, or null where that is not
     * possible: another transport (NIO, io_uring: their writes complete elsewhere), or TLS
     * (bytes must pass the {@link SslHandler}), or no access to native addresses.
     */
    public static Socket socketOf(Channel ch) {
        // Not with SO_LINGER: Netty then closes the socket on another thread, after it dropped the
        // outbound buffer on the loop, and a direct write in between could reach a reused descriptor.
        if (ch instanceof AbstractEpollStreamChannel epoll && epoll.fd() instanceof Socket socket
                && PlatformDependent.hasUnsafe() && ch.pipeline().get(SslHandler.class) == null
                && !(ch.config() instanceof EpollSocketChannelConfig c && c.getSoLinger() > 0)) {
            return socket;
        }
        return null;
    }

    /**
     * Writes events {@code from}..{@code to} (exclusive) of the batch straight to {@code socket}
     * as far as it takes them (with a null socket, none), and hands the rest to the sink's
     * {@link SessionSink#sendEvent(ByteBuf)} in order (through Netty): whole events as retained
     * duplicates, a partly written one as its retained remainder. Returns true when anything went
     * that way (the caller flushes then). The caller has made sure that Netty holds nothing for
     * the connection that these writes could overtake.
     */
    public static boolean writeOrQueue(Socket socket, LiveBatch events, int from, int to, SessionSink rest) {
        long written = 0;
        if (socket != null) {
            try {
                written = Math.max(0, write(socket, events, from, to)); // -1: not this way
            } catch (IOException e) {
                written = 0; // the socket failed: Netty's write meets the same error and closes
            }
        }
        boolean queued = false;
        for (int i = from; i < to; i++) {
            ByteBuf event = events.event(i);
            int length = event.readableBytes();
            if (written >= length) {
                written -= length; // all of it on the wire
                continue;
            }
            if (written == 0) {
                rest.sendEvent(event.retainedDuplicate());
            } else { // the socket took part of this event: the rest follows it
                rest.sendEvent(event.retainedSlice(event.readerIndex() + (int) written, length - (int) written));
                written = 0;
            }
            queued = true;
        }
        return queued;
    }

    /**
     * Writes what {@code buf} holds (a buffer with a native address) straight to {@code socket}
     * as far as it takes it, with one {@code send}, and returns how many bytes went: 0 when it
     * took none or failed (Netty's write of the rest then meets the same error and closes). Its
     * indices stay as they are. As {@link #writeOrQueue}, for a caller that made sure Netty holds
     * nothing for the connection.
     */
    public static int send(Socket socket, ByteBuf buf) {
        try {
            return Math.max(0, socket.sendAddress(buf.memoryAddress(), buf.readerIndex(), buf.writerIndex()));
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * Writes events {@code from}..{@code to} (exclusive) of the batch to {@code socket} at once,
     * without blocking: returns how many bytes the socket took (0 when its buffer is full), or
     * -1 when these events cannot be written this way (a buffer without a native address, an
     * empty one), so the caller writes them through Netty.
     *
     * @throws IOException the socket failed (reset, shut): nothing was written
     */
    static long write(Socket socket, LiveBatch events, int from, int to) throws IOException {
        if (to - from == 1) {
            ByteBuf b = events.event(from);
            if (!directlyWritable(b)) {
                return -1;
            }
            // send(2), as Netty's own single-buffer write: write(2) costs the VFS layer on top
            return socket.sendAddress(b.memoryAddress(), b.readerIndex(), b.writerIndex());
        }
        Prepared p = PREPARED.get();
        p.prepare(events);
        return switch (p.how) {
            case Prepared.JOINED -> socket.sendAddress(p.joined.memoryAddress(), p.offsets[from], p.offsets[to]);
            case Prepared.VECTORS -> socket.writevAddresses(p.iov.memoryAddress(from), to - from);
            default -> -1;
        };
    }

    /** One I/O vector per event, none skipped: a native address and at least a byte. */
    private static boolean directlyWritable(ByteBuf b) {
        return b.hasMemoryAddress() && b.isReadable();
    }
}
