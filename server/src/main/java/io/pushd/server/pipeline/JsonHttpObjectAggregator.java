package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
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

    /**
     * With {@code Expect: 100-continue} the aggregator refuses an oversized body before it is
     * sent, with a 413 of its own; give that one the same JSON body as any other error.
     */
    @Override
    protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
        Object res = super.newContinueResponse(start, maxContentLength, pipeline);
        if (res instanceof FullHttpResponse r && r.status().equals(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE)) {
            r.release();
            FullHttpResponse json = HttpResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    ErrorCodes.PAYLOAD_TOO_LARGE, "body larger than " + this.maxContentLength + " bytes");
            json.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            return json;
        }
        return res;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        // The rest of the body may still be on the wire: answer and close rather than read it.
        HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                ErrorCodes.PAYLOAD_TOO_LARGE, "body larger than " + maxContentLength + " bytes"), true);
    }
}
