package io.pushd.server.store;

import io.netty.util.internal.PlatformDependent;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;

/**
 * Absolute reads of the log's bytes at an offset the bytes may already have moved past.
 *
 * <p>Chronicle maps a file in overlapping chunks, and its bytes stand in one chunk at a time: an
 * excerpt that straddles a chunk boundary moves a writer's or reader's bytes into the next chunk.
 * Its absolute bulk read, {@code Bytes.read(offset, byte[], ...)}, then reads through the current
 * chunk without mapping the one that holds {@code offset}: before that chunk's start it reads
 * outside its mapping. That crashed the JVM (SIGSEGV) when a log file first grew past 128 MiB, and
 * where other memory happens to lie below the mapping it would read that instead. Single-value
 * reads ({@code readInt(offset)}, {@code readByte(offset)}) and {@code addressForRead(offset)} do
 * map the right chunk: these copies go through them.
 */
final class MappedCopy {

    /**
     * Whether Netty may copy memory through {@code sun.misc.Unsafe}: not on JDK 24 and later, where
     * Netty leaves it alone by default, nor with {@code -Dio.netty.noUnsafe=true}. Its copy then
     * throws (a NullPointerException), which made a restart take an intact log for a damaged one
     * and failed every replay. Its direct buffers may still have a native address (JDK 24+).
     */
    static final boolean NETTY_UNSAFE = PlatformDependent.hasUnsafe();

    private MappedCopy() {
    }

    /**
     * The address of {@code [from, from + length)} in the mapped chunk that holds all of it (with
     * the chunks' overlap, the chunk that holds {@code from} holds a whole event), or 0 when the
     * bytes are not mapped memory or no single chunk holds the range.
     */
    static long address(Bytes<?> b, long from, int length) {
        try {
            long address = b.addressForRead(from);
            BytesStore<?, ?> store = b.bytesStore();
            return store != null && store.isDirectMemory() && store.inside(from, length) ? address : 0;
        } catch (UnsupportedOperationException notMapped) {
            return 0;
        }
    }

    /** Copies {@code [from, from + length)} of {@code b} into {@code to[0, length)}. */
    static void copy(Bytes<?> b, long from, byte[] to, int length) {
        long address = address(b, from, length);
        if (address != 0) {
            if (NETTY_UNSAFE) {
                PlatformDependent.copyMemory(address, to, 0, length);
            } else {
                // address() mapped the chunk that holds the whole range: it reads it, in its own
                // (absolute) offsets, through Chronicle's memory access
                b.bytesStore().read(from, to, 0, length);
            }
            return;
        }
        for (int i = 0; i < length; i++) { // each read maps the chunk that holds its byte
            to[i] = b.readByte(from + i);
        }
    }
}
