package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A failure of ours while handling a request answers a JSON 500 that names nothing inside. */
class HttpApiHandlerFailureTest {

    @Test
    void anUnexpectedExceptionWhileHandlingARequestAnswersAJson500AndCloses() {
        // no server context at all: routing a topic request fails inside the handler
        EmbeddedChannel ch = new EmbeddedChannel(new HttpApiHandler(null, new HttpApiHandler.Routes(null, null)));
        DefaultFullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/v1/topics/t",
                Unpooled.buffer(0));
        req.headers().set(HttpHeaderNames.HOST, "x");

        ch.writeInbound(req);

        FullHttpResponse res = ch.readOutbound();
        try {
            String body = res.content().toString(StandardCharsets.UTF_8);
            assertThat(res.status().code()).isEqualTo(500);
            assertThat(res.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
            assertThat(body).isEqualTo("{\"error\":\"internal\",\"message\":\"internal error\"}");
            assertThat(res.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        } finally {
            res.release();
        }
        assertThat(req.refCnt()).isZero();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void bytesACodecCouldNotDecodeAnswerAJson400AndClose() {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpApiHandler(null, new HttpApiHandler.Routes(null, null)));

        ch.pipeline().fireExceptionCaught(new io.netty.handler.codec.DecoderException("bad bytes"));

        FullHttpResponse res = ch.readOutbound();
        try {
            assertThat(res.status().code()).isEqualTo(400);
            assertThat(res.content().toString(StandardCharsets.UTF_8))
                    .isEqualTo("{\"error\":\"bad_request\",\"message\":\"malformed HTTP request\"}");
        } finally {
            res.release();
        }
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aBrokenConnectionIsClosedWithoutAnAnswer() {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpApiHandler(null, new HttpApiHandler.Routes(null, null)));

        ch.pipeline().fireExceptionCaught(new IOException("Connection reset by peer"));

        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
