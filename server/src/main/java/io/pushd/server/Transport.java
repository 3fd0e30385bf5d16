package io.pushd.server;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The I/O transport ({@code server.transport}): {@code auto} is epoll where available, else NIO
 * (io_uring measured no faster than epoll for this fan-out on kernel 6.18, see the README's
 * Performance section); {@code io_uring} and {@code epoll} fall back, with a warning, to the next
 * one that works here (io_uring → epoll → NIO), so a config never stops a server from starting.
 */
record Transport(String name, IoHandlerFactory io, Class<? extends ServerSocketChannel> serverChannel) {

    private static final Logger log = LoggerFactory.getLogger(Transport.class);

    static Transport choose(String wanted) {
        if (wanted.equals("io_uring")) {
            if (IoUring.isAvailable()) {
                return new Transport("io_uring", IoUringIoHandler.newFactory(), IoUringServerSocketChannel.class);
            }
            log.warn("server.transport=io_uring is not available here ({}); using epoll or NIO",
                    String.valueOf(IoUring.unavailabilityCause()));
        }
        if (!wanted.equals("nio")) {
            if (Epoll.isAvailable()) {
                return new Transport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class);
            }
            if (!wanted.equals("auto")) {
                log.warn("server.transport={} is not available here; using NIO", wanted);
            }
        }
        return new Transport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
    }
}
