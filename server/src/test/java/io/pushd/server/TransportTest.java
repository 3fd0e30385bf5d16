package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import io.pushd.server.config.ConfigException;
import io.pushd.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

class TransportTest {

    @Test
    void autoIsEpollWhereAvailableAndEveryChoiceFallsBackToOneThatWorksHere() {
        String native_ = Epoll.isAvailable() ? "epoll" : "nio";
        assertThat(Transport.choose("auto").name()).isEqualTo(native_);
        assertThat(Transport.choose("epoll").name()).isEqualTo(native_);
        assertThat(Transport.choose("io_uring").name()).isEqualTo(IoUring.isAvailable() ? "io_uring" : native_);
        assertThat(Transport.choose("nio").name()).isEqualTo("nio");
    }

    @Test
    void anUnknownTransportIsAConfigurationError() {
        assertThatThrownBy(() -> new ServerConfig.Server("127.0.0.1", 0, 2).withTransport("kqueue"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.transport");
        assertThat(new ServerConfig.Server("127.0.0.1", 0, 2).transport()).isEqualTo("auto");
    }
}
