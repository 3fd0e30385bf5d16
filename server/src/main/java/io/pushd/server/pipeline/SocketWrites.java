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
final class SocketWrites {

    /** The I/O vectors of one batch, entry {@code i} for event {@code i}. */
    private static final class Vectors {
        final IovArray iov;
        LiveBatch batch;
        long generation;
        /** False when some event of {@link #batch} has no vector of its own. */
        boolean usable;

        Vectors(int capacity) {
            iov = new IovArray(Unpooled.directBuffer(capacity * IovArray.IOV_SIZE));
        }

        boolean fill(LiveBatch events) {
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

    /** A batch's events one after the other, event {@code i} at {@code offsets[i]}..{@code offsets[i + 1]}. */
    private static final class Joined {
        final ByteBuf bytes;
        final int[] offsets = new int[CAPACITY + 1];
        LiveBatch batch;
        long generation;
        /** False when the batch does not fit, or some event could not be written directly anyway. */
        boolean usable;

        Joined(int bytes) {
            this.bytes = Unpooled.directBuffer(bytes, bytes);
        }

        boolean fill(LiveBatch events) {
            bytes.clear();
            if (events.size() > CAPACITY) {
                return false;
            }
            for (int i = 0; i < events.size(); i++) {
                ByteBuf b = events.event(i);
                int length = b.readableBytes();
                if (!directlyWritable(b) || length > bytes.writableBytes()) { // as a vector would need
                    return false;
                }
                bytes.writeBytes(b, b.readerIndex(), length); // the lent buffer's indices stay as they are
                offsets[i + 1] = bytes.writerIndex();
            }
            return true;
        }
    }

    /**
     * Bytes a batch may take to be copied: several 100-byte events take a few hundred, a batch
     * of big ones (a publish may carry up to {@code limits.maxPublishBytes}) is written from their
     * own buffers.
     */
    private static final int JOINED_BYTES = 64 * 1024;

    private static final FastThreadLocal<Joined> JOINED = new FastThreadLocal<>() {
        @Override
        protected Joined initialValue() {
            return new Joined(JOINED_BYTES);
        }

        @Override
        protected void onRemoval(Joined j) {
            j.bytes.release(); // the loop thread ends: its buffer goes with it
        }
    };

    /** I/O vectors per loop thread: more than a fan-out task's events (16). */
    private static final int CAPACITY = 64;

    private static final FastThreadLocal<Vectors> VECTORS = new FastThreadLocal<>() {
        @Override
        protected Vectors initialValue() {
            return new Vectors(CAPACITY);
        }

        @Override
        protected void onRemoval(Vectors v) {
            v.iov.release(); // the loop thread ends: its native array goes with it
        }
    };

    private SocketWrites() {
    }

    /**
     * The socket to write {@code ch}'s live events to directly, or null where that is not
     * possible: another transport (NIO, io_uring: their writes complete elsewhere), or TLS
     * (bytes must pass the {@link SslHandler}), or no access to native addresses.
     */
    static Socket socketOf(Channel ch) {
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
        Joined j = JOINED.get();
        if (j.batch != events || j.generation != events.generation()) {
            j.batch = events;
            j.generation = events.generation();
            j.usable = j.fill(events);
        }
        if (j.usable) {
            return socket.sendAddress(j.bytes.memoryAddress(), j.offsets[from], j.offsets[to]);
        }
        Vectors v = VECTORS.get();
        if (v.batch != events || v.generation != events.generation()) {
            v.batch = events;
            v.generation = events.generation();
            v.usable = v.fill(events);
        }
        return v.usable ? socket.writevAddresses(v.iov.memoryAddress(from), to - from) : -1;
    }

    /** One I/O vector per event, none skipped: a native address and at least a byte. */
    private static boolean directlyWritable(ByteBuf b) {
        return b.hasMemoryAddress() && b.isReadable();
    }
}
