// Unit tests of push-client.js: backoff, URLs, cursors, the duplicate guard, hints, and the
// reconnect state machine over fake WebSocket/EventSource classes with mocked timers.
import { test, describe, beforeEach, afterEach, mock } from 'node:test';
import assert from 'node:assert/strict';
import {
  subscribe, nextDelay, ceiling, parseRetryHint, streamUrl, TopicCursor, parseEventId, compareSeq, DEFAULTS, STABLE_MS,
} from '../push-client.js';

describe('backoff', () => {
  test('the ceiling starts at 5 s and doubles per failed attempt up to 60 s', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((a) => ceiling(a)), [5000, 10000, 20000, 40000, 60000, 60000, 60000]);
  });

  test('a huge attempt count stays at the maximum instead of overflowing', () => {
    assert.equal(ceiling(1000), 60000);
    assert.equal(nextDelay(1e9, { random: () => 0.9999999 }), 60000);
  });

  test('the delay is full jitter: uniform from 0 to the ceiling inclusive', () => {
    assert.equal(nextDelay(0, { random: () => 0 }), 0);
    assert.equal(nextDelay(0, { random: () => 0.5 }), 2500);
    assert.equal(nextDelay(0, { random: () => 0.9999999 }), 5000);
    assert.equal(nextDelay(2, { random: () => 0.9999999 }), 20000);
  });

  test('a server hint replaces the delay and is capped at maxHintMs', () => {
    assert.equal(nextDelay(5, { hintMs: 1234, random: () => 0.9 }), 1234);
    assert.equal(nextDelay(0, { hintMs: 10 * 60000 }), DEFAULTS.maxHintMs);
    assert.equal(nextDelay(0, { hintMs: 0 }), 0);
  });

  test('custom firstDelayMs and maxDelayMs shape the ceiling', () => {
    assert.deepEqual([0, 1, 2, 3].map((a) => ceiling(a, 100, 350)), [100, 200, 350, 350]);
  });
});

describe('retry hints', () => {
  test('the retryMs of 1012 and 1013 reasons is read', () => {
    assert.equal(parseRetryHint(1012, '{"retryMs":1234}'), 1234);
    assert.equal(parseRetryHint(1013, '{"retryMs":0}'), 0);
  });

  test('other codes, broken JSON and negative values give no hint', () => {
    assert.equal(parseRetryHint(1000, '{"retryMs":1234}'), null);
    assert.equal(parseRetryHint(1008, '{"retryMs":1234}'), null);
    assert.equal(parseRetryHint(1012, 'restart'), null);
    assert.equal(parseRetryHint(1012, ''), null);
    assert.equal(parseRetryHint(1012, '{"retryMs":-5}'), null);
    assert.equal(parseRetryHint(1012, '{"retryMs":"5"}'), null);
  });
});

describe('URLs', () => {
  test('an https base gives wss and every topic with its resume ID', () => {
    assert.equal(streamUrl('https://push.example.com', 'websocket', { orders: 'e1-5', news: null }),
      'wss://push.example.com/v1/live?topic=orders@e1-5&topic=news@');
  });

  test('an http base with a path prefix and port keeps both', () => {
    assert.equal(streamUrl('http://h.example:8080/push/', 'websocket', { a: null }),
      'ws://h.example:8080/push/v1/live?topic=a@');
  });

  test('SSE uses http(s) and /v1/sse, also from a ws base', () => {
    assert.equal(streamUrl('wss://h.example', 'sse', { a: 'x-1', b: null }), 'https://h.example/v1/sse?topic=a@x-1&topic=b@');
    assert.equal(streamUrl('ws://h.example', 'sse', { a: null }), 'http://h.example/v1/sse?topic=a@');
  });

  test('an access token is percent-encoded into access_token', () => {
    assert.equal(streamUrl('http://h', 'websocket', { a: null }, 'a+b/c=='), 'ws://h/v1/live?topic=a@&access_token=a%2Bb%2Fc%3D%3D');
  });

  test('a relative or missing URL outside a page is refused', () => {
    assert.throws(() => streamUrl('/relative', 'websocket', {}), TypeError);
    assert.throws(() => streamUrl('', 'websocket', {}), TypeError);
  });
});

describe('cursors and the duplicate guard', () => {
  test('IDs parse into epoch and a decimal sequence compared without precision loss', () => {
    assert.deepEqual(parseEventId('abc-42'), { epoch: 'abc', seq: '42' });
    assert.equal(parseEventId('ABC-1'), null);
    assert.equal(parseEventId('abc'), null);
    assert.equal(compareSeq('9', '10'), -1);
    assert.equal(compareSeq('9007199254740993', '9007199254740992'), 1);
    assert.equal(compareSeq('7', '7'), 0);
  });

  test('a live-only topic resumes from the confirmed head, an empty one from <epoch>-0', () => {
    const a = new TopicCursor('a');
    a.subscribed({ head: 'e-4', epoch: 'e' });
    assert.equal(a.last, 'e-4');
    const b = new TopicCursor('b');
    b.subscribed({ head: null, epoch: 'e' });
    assert.equal(b.last, 'e-0');
  });

  test('a live-only topic takes the position subscribed names in its id, and ignores fields it does not know', () => {
    const a = new TopicCursor('a');
    a.subscribed({ head: 'e-4', epoch: 'e', id: 'e-4', someFutureField: 1 });
    assert.equal(a.last, 'e-4');
    const b = new TopicCursor('b');
    b.subscribed({ head: null, epoch: 'e', id: 'e-0' });
    assert.equal(b.last, 'e-0');
    const c = new TopicCursor('c', 'e-2');
    c.subscribed({ head: 'e-9', epoch: 'e', id: 'e-2' });
    assert.equal(c.last, 'e-2');
  });

  test('a topic with a resume ID keeps it when subscribed', () => {
    const c = new TopicCursor('a', 'e-2');
    c.subscribed({ head: 'e-9', epoch: 'e' });
    assert.equal(c.last, 'e-2');
  });

  test('an ID not greater than the last one of the epoch is a duplicate', () => {
    const c = new TopicCursor('a', 'e-5');
    assert.equal(c.offer('e-5'), 'duplicate');
    assert.equal(c.offer('e-3'), 'duplicate');
    assert.equal(c.offer('e-6'), 'accept');
    assert.equal(c.offer('e-10'), 'accept');
    assert.equal(c.offer('e-9'), 'duplicate');
    assert.equal(c.last, 'e-10');
  });

  test('another epoch is dropped until a reset moves the topic there', () => {
    const c = new TopicCursor('a', 'old-5');
    assert.equal(c.offer('new-6'), 'foreign');
    c.reset('new-3');
    assert.equal(c.offer('new-3'), 'duplicate');
    assert.equal(c.offer('new-4'), 'accept');
  });
});

// ---- the state machine ----

class FakeWebSocket {
  static all = [];
  constructor(url, protocols, opts) {
    this.url = url;
    this.opts = opts;
    this.readyState = 0;
    this.closedWith = undefined;
    FakeWebSocket.all.push(this);
  }
  close(code) {
    this.closedWith = code;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  send(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  drop(code = 1006, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

class FakeEventSource {
  static all = [];
  constructor(url, init) {
    this.url = url;
    this.init = init;
    this.closed = false;
    this.listeners = {};
    FakeEventSource.all.push(this);
  }
  addEventListener(type, f) {
    (this.listeners[type] ??= []).push(f);
  }
  close() {
    this.closed = true;
  }
  open() {
    this.onopen?.({});
  }
  emit(type, data) {
    const e = { data: typeof data === 'string' ? data : JSON.stringify(data) };
    if (type === 'message') this.onmessage?.(e);
    for (const f of this.listeners[type] ?? []) f(e);
  }
  error() {
    this.onerror?.({});
  }
}

const lastWs = () => FakeWebSocket.all.at(-1);
const sub = (frame) => ({ type: 'subscribed', head: null, oldest: null, epoch: 'e', ...frame });
const ev = (topic, id, data = {}) => ({ type: 'event', topic, id, ts: 1, data });

function start(options = {}) {
  const log = { events: [], states: [], resets: [] };
  const s = subscribe('http://push.test', {
    topics: ['a', 'b'],
    WebSocket: FakeWebSocket,
    EventSource: FakeEventSource,
    random: () => 0.5,
    onlineEvents: false,
    fetch: async () => { throw new TypeError('no network in unit tests'); },
    onEvent: (e) => log.events.push(e.id),
    onState: (st, d) => log.states.push([st, d]),
    onReset: (t, reason, d) => log.resets.push([t, reason, d.id]),
    ...options,
  });
  return { s, log };
}

describe('subscription', () => {
  beforeEach(() => {
    FakeWebSocket.all = [];
    FakeEventSource.all = [];
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  });
  afterEach(() => mock.timers.reset());

  test('the first connect is immediate and names every topic', () => {
    const { s, log } = start({ topics: { a: null, b: 'e-3' } });
    assert.equal(FakeWebSocket.all.length, 0, 'after the caller got sub');
    mock.timers.tick(0);
    assert.equal(lastWs().url, 'ws://push.test/v1/live?topic=a@&topic=b@e-3');
    assert.deepEqual(log.states[0], ['connecting', { attempt: 0, transport: 'websocket' }]);
    lastWs().open();
    assert.equal(s.state, 'open');
    s.close();
  });

  test('a drop waits a jittered 0-5 s, then reconnects with every topic resumed', () => {
    const { s, log } = start();
    mock.timers.tick(0);
    const ws = lastWs();
    ws.open();
    ws.send(sub({ topic: 'a', head: 'e-4' }));
    ws.send(sub({ topic: 'b' }));
    ws.send(ev('a', 'e-5'));
    ws.drop(1006);
    const [state, d] = log.states.at(-1);
    assert.equal(state, 'waiting');
    assert.equal(d.delayMs, 2500);
    assert.equal(d.until, 2500);
    assert.equal(d.hint, false);
    mock.timers.tick(2499);
    assert.equal(FakeWebSocket.all.length, 1);
    mock.timers.tick(1);
    assert.equal(lastWs().url, 'ws://push.test/v1/live?topic=a@e-5&topic=b@e-0');
    assert.deepEqual(s.lastIds(), { a: 'e-5', b: 'e-0' });
    s.close();
  });

  test('failed attempts double the ceiling and only a connection that stays subscribed resets the counter', () => {
    const { s, log } = start({ transport: 'websocket' });
    const delays = [];
    mock.timers.tick(0);
    for (let i = 0; i < 4; i++) {
      lastWs().drop(1006);
      delays.push(log.states.at(-1)[1].delayMs);
      mock.timers.tick(delays.at(-1));
    }
    assert.deepEqual(delays, [2500, 5000, 10000, 20000]);
    // Open and one topic of two subscribed: still counted as failing.
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    lastWs().drop(1006);
    assert.equal(log.states.at(-1)[1].delayMs, 30000);
    mock.timers.tick(30000);
    // Every topic subscribed, then dropped at once (a replay that fails): still a failure.
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    lastWs().send(sub({ topic: 'b' }));
    lastWs().drop(1006);
    assert.equal(log.states.at(-1)[1].delayMs, 30000);
    mock.timers.tick(30000);
    // Every topic subscribed and up for STABLE_MS: healthy, the next drop starts again at 0.
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    lastWs().send(sub({ topic: 'b' }));
    assert.equal(s.stats().failedAttempts, 6);
    mock.timers.tick(STABLE_MS);
    assert.equal(s.stats().failedAttempts, 0);
    lastWs().drop(1006);
    assert.equal(log.states.at(-1)[1].delayMs, 2500);
    s.close();
  });

  test('a 1012 hint replaces the next delay and the attempt still counts', () => {
    const { s, log } = start();
    mock.timers.tick(0);
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    lastWs().send(sub({ topic: 'b' }));
    lastWs().drop(1012, '{"retryMs":1234}');
    assert.deepEqual([log.states.at(-1)[1].delayMs, log.states.at(-1)[1].hint], [1234, true]);
    mock.timers.tick(1234);
    lastWs().drop(1006); // the server is not back yet
    assert.equal(log.states.at(-1)[1].delayMs, 5000, 'attempt 1: half of 10 s');
    s.close();
  });

  test('close codes that mean "fix the client" still reconnect, with backoff rather than at once', () => {
    const { s, log } = start();
    mock.timers.tick(0);
    lastWs().open();
    lastWs().drop(1008, '{"retryMs":1}');
    assert.deepEqual([log.states.at(-1)[1].code, log.states.at(-1)[1].delayMs, log.states.at(-1)[1].hint], [1008, 2500, false]);
    mock.timers.tick(2500);
    assert.equal(FakeWebSocket.all.length, 2);
    s.close();
  });

  test('an ID already delivered is never delivered again, also across a reconnect', () => {
    const { s, log } = start();
    mock.timers.tick(0);
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    for (const id of ['e-1', 'e-2', 'e-2', 'e-3']) lastWs().send(ev('a', id));
    lastWs().drop(1006);
    mock.timers.tick(2500);
    assert.match(lastWs().url, /topic=a@e-3/);
    lastWs().open();
    lastWs().send(sub({ topic: 'a', head: 'e-4' }));
    for (const id of ['e-3', 'e-4']) lastWs().send(ev('a', id));
    assert.deepEqual(log.events, ['e-1', 'e-2', 'e-3', 'e-4']);
    assert.equal(s.stats().duplicatesDropped, 2);
    s.close();
  });

  test('a reset calls onReset and the topic continues from the reset id in its new epoch', () => {
    const { s, log } = start({ topics: { a: 'zzz-5', b: null } });
    mock.timers.tick(0);
    lastWs().open();
    lastWs().send(sub({ topic: 'a', head: 'e-2', epoch: 'e' }));
    lastWs().send(ev('a', 'e-1')); // another epoch without a reset: dropped
    lastWs().send({ type: 'reset', topic: 'a', id: 'e-2', reason: 'unknown_epoch' });
    lastWs().send(ev('a', 'e-3'));
    assert.deepEqual(log.resets, [['a', 'unknown_epoch', 'e-2']]);
    assert.deepEqual(log.events, ['e-3']);
    assert.equal(s.lastIds().a, 'e-3');
    s.close();
  });

  test('coming back online skips the wait', () => {
    const target = new EventTarget();
    const { s } = start({ onlineEvents: target });
    mock.timers.tick(0);
    lastWs().drop(1006);
    assert.equal(s.state, 'waiting');
    target.dispatchEvent(new Event('online'));
    assert.equal(FakeWebSocket.all.length, 2);
    assert.equal(s.state, 'connecting');
    s.close();
    target.dispatchEvent(new Event('online'));
    assert.equal(FakeWebSocket.all.length, 2, 'closed: the listener is gone');
  });

  test('an attempt with no frame within connectTimeoutMs is abandoned and backed off', () => {
    const { s, log } = start({ connectTimeoutMs: 1000 });
    mock.timers.tick(0);
    lastWs().open();
    mock.timers.tick(1000);
    assert.equal(lastWs().closedWith, 1000);
    assert.equal(log.states.at(-1)[0], 'waiting');
    s.close();
  });

  test("'auto' falls back to SSE after three WebSocket attempts that got no frame", () => {
    const { s } = start();
    mock.timers.tick(0);
    for (let i = 0; i < 3; i++) {
      lastWs().drop(1006);
      mock.timers.tick(60000);
    }
    assert.equal(FakeWebSocket.all.length, 3);
    assert.equal(FakeEventSource.all.length, 1);
    assert.equal(FakeEventSource.all[0].url, 'http://push.test/v1/sse?topic=a@&topic=b@');
    assert.equal(s.transport, 'sse');
    s.close();
  });

  test("'auto' never falls back once a WebSocket of the subscription got a frame", () => {
    const { s } = start();
    mock.timers.tick(0);
    lastWs().open();
    lastWs().send(sub({ topic: 'a' }));
    for (let i = 0; i < 5; i++) {
      lastWs().drop(1006);
      mock.timers.tick(60000);
    }
    assert.equal(FakeEventSource.all.length, 0);
    assert.equal(FakeWebSocket.all.length, 6);
    s.close();
  });

  test('when SSE gets nothing either, auto tries the WebSocket again', () => {
    const { s } = start();
    mock.timers.tick(0);
    for (let i = 0; i < 3; i++) {
      lastWs().drop(1006);
      mock.timers.tick(60000);
    }
    FakeEventSource.all[0].error();
    mock.timers.tick(60000);
    assert.equal(FakeWebSocket.all.length, 4);
    s.close();
  });

  test('forced SSE reads subscribed, events, resets and the close event hint, and runs its own reconnects', () => {
    const { s, log } = start({ transport: 'sse' });
    mock.timers.tick(0);
    const es = FakeEventSource.all[0];
    assert.equal(es.url, 'http://push.test/v1/sse?topic=a@&topic=b@');
    es.open();
    es.emit('subscribed', sub({ topic: 'a', head: 'e-1' }));
    es.emit('subscribed', sub({ topic: 'b' }));
    es.emit('message', ev('a', 'e-2'));
    es.emit('message', ev('a', 'e-2'));
    es.emit('reset', { type: 'reset', topic: 'b', id: 'e-9', reason: 'future' });
    es.emit('close', { code: 1012, retryMs: 777 });
    assert.equal(es.closed, true, 'the client, not EventSource, reconnects');
    assert.deepEqual(log.events, ['e-2']);
    assert.deepEqual(log.resets, [['b', 'future', 'e-9']]);
    assert.deepEqual([log.states.at(-1)[1].delayMs, log.states.at(-1)[1].code], [777, 1012]);
    mock.timers.tick(777);
    assert.equal(FakeEventSource.all[1].url, 'http://push.test/v1/sse?topic=a@e-2&topic=b@e-9');
    FakeEventSource.all[1].error();
    assert.equal(FakeEventSource.all[1].closed, true);
    assert.equal(log.states.at(-1)[1].delayMs, 5000, 'attempt 1 after the hinted one');
    s.close();
  });

  test('close stops everything: socket closed with 1000, no more attempts or callbacks', () => {
    const { s, log } = start();
    mock.timers.tick(0);
    const ws = lastWs();
    ws.open();
    s.close();
    assert.equal(ws.closedWith, 1000);
    assert.equal(s.state, 'closed');
    const n = log.states.length;
    ws.send(ev('a', 'e-1'));
    ws.drop(1006);
    mock.timers.tick(120000);
    assert.equal(FakeWebSocket.all.length, 1);
    assert.equal(log.states.length, n);
    assert.deepEqual(log.events, []);
    s.close();
  });

  test('an accessToken function is asked before every attempt and the result goes into the URL', async () => {
    let n = 0;
    const { s } = start({ accessToken: async () => `t${++n}` });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    assert.match(lastWs().url, /access_token=t1$/);
    lastWs().drop(1006);
    mock.timers.tick(2500);
    await new Promise((r) => setImmediate(r));
    assert.match(lastWs().url, /access_token=t2$/);
    s.close();
  });

  test('bad options are refused at once with the option named', () => {
    assert.throws(() => subscribe('http://h', { topics: [], WebSocket: FakeWebSocket }), /topics/);
    assert.throws(() => subscribe('http://h', { topics: ['a b'], WebSocket: FakeWebSocket }), /topics/);
    assert.throws(() => subscribe('http://h', { topics: { a: 'nope' }, WebSocket: FakeWebSocket }), /topics\.a/);
    assert.throws(() => subscribe('http://h', { topics: ['a'], transport: 'x', WebSocket: FakeWebSocket }), /transport/);
    assert.throws(() => subscribe('http://h', { topics: ['a'], maxDelayMs: 1, WebSocket: FakeWebSocket }), /maxDelayMs/);
  });
});

describe('tokens', () => {
  beforeEach(() => {
    FakeWebSocket.all = [];
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  });
  afterEach(() => mock.timers.reset());

  test('refresh sends an auth frame on the open WebSocket and nothing before it is open', async () => {
    const { s } = start({ accessToken: 't1' });
    assert.equal(s.refresh('t2'), false, 'not connected yet');
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r)); // the token is awaited
    const ws = lastWs();
    const sent = [];
    ws.send = (x) => sent.push(x);
    assert.equal(s.refresh('t2'), false, 'not open yet');
    ws.open();
    assert.equal(s.refresh('t2'), true);
    assert.deepEqual(sent.map((x) => JSON.parse(x)), [{ type: 'auth', token: 't2' }]);
    s.close();
  });

  test('a 4001 close reconnects at once and asks for a new token', async () => {
    let asked = 0;
    const { s } = start({ accessToken: () => `t${++asked}` });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    lastWs().open();
    lastWs().drop(4001, 'token expired');
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    assert.equal(FakeWebSocket.all.length, 2);
    assert.match(lastWs().url, /access_token=t2/);
    assert.equal(s.stats().failedAttempts, 0);
    s.close();
  });

  test('an attempt refused with 403 is reported and, with no other token to try, not retried', async () => {
    const errors = [];
    const refusedFetch = async () => ({ status: 403, json: async () => ({ error: 'origin_not_allowed' }) });
    const { s, log } = start({ transport: 'websocket', fetch: refusedFetch, onError: (e) => errors.push(e) });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    lastWs().drop(1006); // what a refused upgrade looks like to a WebSocket: never opened, 1006
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r)); // the probe's answer
    assert.deepEqual(errors.map((e) => [e.status, e.code]), [[403, 'origin_not_allowed']]);
    assert.equal(log.states.at(-1)[0], 'closed');
    mock.timers.tick(60000);
    assert.equal(FakeWebSocket.all.length, 1, 'no attempt after the refusal');
    s.close();
  });

  test('after a 401 an accessToken function is asked again, and the same token is not sent twice', async () => {
    const errors = [];
    const refusedFetch = async () => ({ status: 401, json: async () => ({ error: 'invalid_token' }) });
    const { s, log } = start({ transport: 'websocket', fetch: refusedFetch, accessToken: () => 'stale',
      onError: (e) => errors.push(e) });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    lastWs().drop(1006);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    assert.equal(errors[0].status, 401);
    mock.timers.tick(60000); // the backoff, then the supplier answers the same token again
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    assert.equal(FakeWebSocket.all.length, 1, 'the refused token was not sent again');
    assert.equal(errors.at(-1).code, 'access_denied');
    assert.equal(log.states.at(-1)[0], 'closed');
    s.close();
  });

  test('over SSE too a 4001 right after another waits the backoff: the stream\'s retryMs of 0 is no hint', async () => {
    const { s, log } = start({ transport: 'sse', accessToken: () => 'same' });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    FakeEventSource.all.at(-1).open();
    FakeEventSource.all.at(-1).emit('close', { code: 4001, retryMs: 0 });
    assert.equal(log.states.at(-1)[1].delayMs, 0);
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    FakeEventSource.all.at(-1).open();
    FakeEventSource.all.at(-1).emit('close', { code: 4001, retryMs: 0 }); // again, within STABLE_MS
    assert.deepEqual([log.states.at(-1)[1].delayMs, log.states.at(-1)[1].hint], [2500, false]);
    s.close();
  });

  test('a 4001 right after another waits the backoff: a token source that hands out the expired one is not hammered', async () => {
    const { s, log } = start({ accessToken: () => 'same' });
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    lastWs().open();
    lastWs().drop(4001, 'token expired');
    assert.equal(log.states.at(-1)[1].delayMs, 0);
    mock.timers.tick(0);
    await new Promise((r) => setImmediate(r));
    lastWs().open();
    lastWs().drop(4001, 'token expired'); // again, within STABLE_MS
    assert.equal(log.states.at(-1)[1].delayMs, 2500);
    s.close();
  });
});
