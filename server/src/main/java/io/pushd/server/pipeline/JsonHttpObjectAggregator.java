package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.pushd.protocol.ErrorCodes;

/** Bounds request bodies and answers an oversized one with a JSON 413, then closes. */
final class JsonHttpObjectAggregator extends HttpObjectAggregator {

    private final int maxContentLength;

    JsonHttpObjectAggregator(int maxContentLength) {
        super(maxContentLength);
        this.maxContentLength = maxContentLength;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        // The rest of the body may still be on the wire: answer and close rather than read it.
        HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                ErrorCodes.PAYLOAD_TOO_LARGE, "body larger than " + maxContentLength + " bytes"), true);
    }
}
