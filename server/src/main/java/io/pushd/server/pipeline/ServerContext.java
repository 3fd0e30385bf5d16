package io.pushd.server.pipeline;

import io.pushd.server.admission.ClientAddress;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.Lifecycle;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionContext;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.Publisher;

/**
 * What the per-connection handlers share: one instance per server.
 *
 * @param store    the kept events, for topic info and event IDs
 * @param sessions what the sessions of every transport share
 */
public record ServerContext(ServerConfig config, EventHistory history, Publisher publisher, Lifecycle lifecycle,
                            ClientAddress clientAddress, ServerMetrics metrics, SessionContext sessions) {
}
