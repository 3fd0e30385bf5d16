// The client over server-sent events against the real server, with npm `eventsource` as Node's
// EventSource (the contract: protocol/README.md, "Server-sent events"). Skipped only without a built
// server jar, like the other suites.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { subscribe, publish } from '../push-client.js';
import { JarServer, serverSkipReason, waitFor } from './support/server.js';
import { restartScenario, assertExactlyOnce, assertRestartsSeen } from './support/scenario.js';

const skip = serverSkipReason();

function follow(url, topics, options = {}) {
  const log = { events: {}, states: [], resets: [], subscribed: new Set() };
  const sub = subscribe(url, {
    topics,
    transport: 'sse',
    EventSource,
    firstDelayMs: 300,
    maxDelayMs: 2000,
    onEvent: (e) => (log.events[e.topic] ??= []).push(e.id),
    onState: (s, d) => log.states.push([s, d]),
    onReset: (t, reason, d) => log.resets.push({ topic: t, reason, id: d.id }),
    onSubscribed: (t) => log.subscribed.add(t),
    ...options,
  });
  const names = Array.isArray(topics) ? topics : Object.keys(topics);
  return {
    sub,
    log,
    received: async () => Object.fromEntries(names.map((t) => [t, [...(log.events[t] || [])]])),
    subscribed: async () => names.every((t) => log.subscribed.has(t)),
    states: async () => log.states,
  };
}

describe('over SSE against the real server', { skip: skip ?? false, timeout: 90000 }, () => {
  let server;
  before(async () => {
    server = new JarServer('sse');
    await server.start();
  });
  after(async () => server && server.close());

  test('forced SSE follows two topics through a graceful restart and a kill -9: every acknowledged event once, in order', async () => {
    const c = follow(server.url, { a: null, b: null });
    try {
      const result = await restartScenario(server, c, ['a', 'b']);
      assertExactlyOnce(result, ['a', 'b']);
      // The drain ends the stream with `event: close` {"code":1012,"retryMs":N}.
      assertRestartsSeen(result.states);
      assert.equal(c.sub.stats().duplicatesDropped, 0);
      assert.ok(c.log.states.some(([s, d]) => s === 'open' && d.transport === 'sse'));
    } finally {
      c.sub.close();
    }
  });

  test('an ID from another epoch reaches onReset over SSE', async () => {
    const { id } = await publish(server.url, 'sse.reset', 1);
    const c = follow(server.url, { 'sse.reset': 'zzz-5' });
    try {
      await waitFor(() => c.log.resets.length > 0, 10000, 'a reset');
      assert.deepEqual(c.log.resets[0], { topic: 'sse.reset', reason: 'unknown_epoch', id });
    } finally {
      c.sub.close();
    }
  });

  test("'auto' with a WebSocket that never opens ends up on SSE and delivers", async () => {
    // A WebSocket class that always fails the way a proxy refusing upgrades looks to a page.
    class RefusedWebSocket {
      constructor() {
        this.readyState = 0;
        setTimeout(() => this.onclose?.({ code: 1006, reason: '' }), 10);
      }
      close() {}
    }
    const c = follow(server.url, ['auto.t'], { transport: 'auto', WebSocket: RefusedWebSocket, firstDelayMs: 50, maxDelayMs: 200 });
    try {
      await waitFor(() => c.subscribed(), 10000, 'subscribed over SSE');
      assert.equal(c.sub.transport, 'sse');
      const { id } = await publish(server.url, 'auto.t', 'x');
      await waitFor(() => (c.log.events['auto.t'] || []).length === 1, 10000, 'the event');
      assert.deepEqual(c.log.events['auto.t'], [id]);
    } finally {
      c.sub.close();
    }
  });

  test('a plain EventSource without the client gets event frames with an id per event', async () => {
    const es = new EventSource(`${server.url}/v1/sse?topic=plain.t`);
    const got = [];
    let subscribed = false;
    es.addEventListener('subscribed', () => (subscribed = true));
    es.onmessage = (e) => got.push({ lastEventId: e.lastEventId, frame: JSON.parse(e.data) });
    try {
      await waitFor(() => subscribed, 10000, 'subscribed');
      const { id } = await publish(server.url, 'plain.t', { hello: 1 });
      await waitFor(() => got.length === 1, 10000, 'the event');
      assert.equal(got[0].lastEventId, id);
      assert.deepEqual([got[0].frame.type, got[0].frame.id, got[0].frame.data], ['event', id, { hello: 1 }]);
    } finally {
      es.close();
    }
  });
});
