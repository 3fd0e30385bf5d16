package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.pushd.protocol.ErrorCodes;

/**
 * Bounds request bodies. An oversized one is refused with a JSON 413 that goes out in its turn
 * (after the answers to the requests pipelined before it, a publish's included), and the
 * connection closes after it ({@link HttpApiHandler.Refusal}).
 *
 * <p>Netty's own answers to a failed expectation are not used: they are written at once, out of
 * turn, and they tell the codec to skip the body, so that a body the client sends anyway (which
 * it may) is parsed as the next request, one the client smuggled past whatever checked the first.
 * Here an {@code Expect: 100-continue} whose length is over the limit is the same oversized
 * request as one without it, and any other expectation is read like any request and answered 417
 * by {@link HttpRequestCheck}.
 */
final class JsonHttpObjectAggregator extends HttpObjectAggregator {

    private final int maxContentLength;

    JsonHttpObjectAggregator(int maxContentLength) {
        super(maxContentLength);
        this.maxContentLength = maxContentLength;
    }

    @Override
    protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
        if (start.protocolVersion().compareTo(HttpVersion.HTTP_1_1) < 0 || !start.headers().contains(HttpHeaderNames.EXPECT)) {
            return null; // HTTP/1.0 has no expectations (RFC 9110 §10.1.1)
        }
        if (!start.headers().containsValue(HttpHeaderNames.EXPECT, HttpHeaderValues.CONTINUE, true)
                || HttpUtil.getContentLength(start, -1L) > maxContentLength) {
            return null; // answered in turn: 417 by the request check, 413 by handleOversizedMessage
        }
        return super.newContinueResponse(start, maxContentLength, pipeline); // 100 Continue
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        // The rest of the body may still be on the wire: the connection closes after this answer
        // rather than read it; reading pauses while the answer waits for its turn.
        ctx.fireChannelRead(new HttpApiHandler.Refusal(HttpResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                ErrorCodes.PAYLOAD_TOO_LARGE, "body larger than " + maxContentLength + " bytes")));
    }
}
