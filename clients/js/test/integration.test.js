// The client against the real server (the fat jar) over WebSocket, with npm `ws` as Node 20's WebSocket.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { subscribe, publish, PushError } from '../push-client.js';
import { JarServer, serverSkipReason, waitFor } from './support/server.js';
import { restartScenario, assertExactlyOnce, assertRestartsSeen } from './support/scenario.js';

const skip = serverSkipReason();

/** A client in this process, recording what the application would see. */
function follow(url, topics, options = {}) {
  const log = { events: {}, states: [], resets: [], subscribed: new Set() };
  const sub = subscribe(url, {
    topics,
    transport: 'websocket',
    WebSocket,
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

describe('over WebSocket against the real server', { skip: skip ?? false, timeout: 90000 }, () => {
  let server;
  before(async () => {
    server = new JarServer('ws');
    await server.start();
  });
  after(async () => server && server.close());

  test('two topics through a graceful restart and a kill -9 while publishing: every acknowledged event once, in order', async () => {
    const c = follow(server.url, { 'orders.eu': null, news: null });
    try {
      const result = await restartScenario(server, c, ['orders.eu', 'news']);
      assertExactlyOnce(result, ['orders.eu', 'news']);
      assertRestartsSeen(result.states);
      assert.equal(c.sub.stats().duplicatesDropped, 0, 'the server never sent a duplicate');
      assert.ok(result.publishFailures > 0, 'the publisher really ran into the restarts');
    } finally {
      c.sub.close();
    }
  });

  test('an ID from another epoch reaches onReset as unknown_epoch and the topic goes on from the reset id', async () => {
    const first = await publish(server.url, 'reset.me', { n: 1 });
    const c = follow(server.url, { 'reset.me': 'zzz-5' });
    try {
      await waitFor(() => c.log.resets.length > 0, 10000, 'a reset');
      assert.deepEqual(c.log.resets[0], { topic: 'reset.me', reason: 'unknown_epoch', id: first.id });
      const next = await publish(server.url, 'reset.me', { n: 2 });
      await waitFor(() => (c.log.events['reset.me'] || []).length > 0, 10000, 'the event after the reset');
      assert.deepEqual(c.log.events['reset.me'], [next.id]);
    } finally {
      c.sub.close();
    }
  });

  test('an ID beyond the head reaches onReset as future', async () => {
    const { id } = await publish(server.url, 'future.me', 1);
    const epoch = id.slice(0, id.lastIndexOf('-'));
    const c = follow(server.url, { 'future.me': `${epoch}-999` });
    try {
      await waitFor(() => c.log.resets.length > 0, 10000, 'a reset');
      assert.deepEqual(c.log.resets[0], { topic: 'future.me', reason: 'future', id });
    } finally {
      c.sub.close();
    }
  });

  test('a new subscription resumed from lastIds() of a closed one gets exactly the events it missed', async () => {
    const c1 = follow(server.url, ['resume.a']);
    await waitFor(() => c1.subscribed(), 10000, 'subscribed');
    const seen = await publish(server.url, 'resume.a', 'seen');
    await waitFor(() => (c1.log.events['resume.a'] || []).length === 1, 10000, 'the first event');
    const stored = c1.sub.lastIds();
    c1.sub.close();
    assert.equal(c1.sub.state, 'closed');
    assert.deepEqual(stored, { 'resume.a': seen.id });
    const missed = [(await publish(server.url, 'resume.a', 'm1')).id, (await publish(server.url, 'resume.a', 'm2')).id];
    const c2 = follow(server.url, stored);
    try {
      await waitFor(() => (c2.log.events['resume.a'] || []).length === 2, 10000, 'the missed events');
      assert.deepEqual(c2.log.events['resume.a'], missed);
    } finally {
      c2.sub.close();
    }
  });

  test('publish reports a retried Idempotency-Key as a duplicate with the original ID, and refusals as PushError', async () => {
    const a = await publish(server.url, 'pub.t', { x: 1 }, { idempotencyKey: 'key-1' });
    const b = await publish(server.url, 'pub.t', { x: 1 }, { idempotencyKey: 'key-1' });
    assert.deepEqual([a.duplicate, b.duplicate, b.id], [false, true, a.id]);
    await assert.rejects(publish(server.url, 'pub.t', 1, { idempotencyKey: 'k'.repeat(201) }),
      (e) => e instanceof PushError && e.status === 400 && e.code === 'invalid_idempotency_key');
  });
});
