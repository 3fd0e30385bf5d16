package io.pushd.server.pipeline;

import io.netty.channel.group.ChannelGroup;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.admission.ClientAddress;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.Lifecycle;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.Publisher;
import io.pushd.server.topic.TopicHub;

/** What the per-connection handlers share: one instance per server. */
public record ServerContext(ServerConfig config, EventHistory history, Publisher publisher, TopicHub hub,
                            Lifecycle lifecycle, ChannelGroup liveChannels,
                            AdmissionControl admission, ClientAddress clientAddress, ServerMetrics metrics) {
}
