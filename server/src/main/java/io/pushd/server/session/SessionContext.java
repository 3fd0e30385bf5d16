package io.pushd.server.session;

import io.pushd.server.config.Limits;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.auth.AccessControl;
import io.pushd.server.auth.AuthConfig;
import java.time.Clock;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.Lifecycle;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.lifecycle.ReturnPlan;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.history.EventHistory;
import io.pushd.server.topic.TopicHub;

/**
 * What every {@link Session} shares: one instance per server.
 *
 * @param history  the kept events subscriptions replay from
 * @param registry the admitted sessions, which the drain closes
 * @param access   in-band subscribes and token refreshes are decided here
 * @param returns  the hint of a session opened while the server is not serving
 */
public record SessionContext(Limits limits, EventHistory history, TopicHub hub, Lifecycle lifecycle,
                             RetryHints hints, AdmissionControl admission, Sessions registry,
                             ServerMetrics metrics, AccessControl access, ReturnPlan returns) {

    /** Without access control (auth.mode none), for tests of other parts. */
    public SessionContext(Limits limits, EventHistory history, TopicHub hub, Lifecycle lifecycle,
                          RetryHints hints, AdmissionControl admission, Sessions registry, ServerMetrics metrics) {
        this(limits, history, hub, lifecycle, hints, admission, registry, metrics,
                AccessControl.start(AuthConfig.defaults(), Clock.systemUTC(), reason -> { }),
                new ReturnPlan(lifecycle, hints));
    }
}
