// push-client.js: the official JavaScript client of the push server (protocol v1).
//
// One dependency-free ES module for browsers and Node >= 20. It follows a fixed set of topics
// over a WebSocket (`/v1/live`) or server-sent events (`/v1/sse`), reconnects by itself with
// full-jitter backoff and the server's retry hints, resumes every topic after its last ID, and
// delivers each event ID once, in order. See README.md for the rules it follows.

/** Defaults of the options; the same numbers as the Java client and protocol/README.md. */
export const DEFAULTS = Object.freeze({
  /** The first delay after a drop is uniform in [0, firstDelayMs]; the ceiling doubles per failed attempt. */
  firstDelayMs: 5000,
  /** The ceiling stops doubling here. */
  maxDelayMs: 60000,
  /** A server hint above this is treated as this (guards against a nonsensical reason). */
  maxHintMs: 300000,
  /** An attempt that gets no frame at all within this is given up and counts as failed. */
  connectTimeoutMs: 10000,
  /** transport 'auto': this many WebSocket attempts in a row that got no frame, and none ever did, switch to SSE. */
  wsFailuresBeforeSse: 3,
});

export const LIVE_PATH = '/v1/live';
export const SSE_PATH = '/v1/sse';

const TOPIC_RE = /^[A-Za-z0-9_.:-]{1,200}$/;
const ID_RE = /^([0-9a-z]{1,32})-([0-9]+)$/;
/** Close codes whose reason carries {"retryMs":N}. */
const HINT_CODES = new Set([1012, 1013]);
/** RFC 6455: the connection ended without a close frame. */
export const ABNORMAL_CLOSURE = 1006;
/**
 * A connection counts as healthy (the next drop starts again at attempt 0) once every topic was
 * subscribed and it then stayed up this long; also the least time between two immediate 4001
 * reconnects. The same as the Java client's.
 */
export const STABLE_MS = 3000;

/** An error of the client or a refused publish; `status` and `code` say which. Never carries a token. */
export class PushError extends Error {
  constructor(message, { status, code } = {}) {
    super(message);
    this.name = 'PushError';
    this.status = status;
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------
// Pure helpers (exported for tests and for applications that build their own loop).

/** `{ epoch, seq }` of an event ID `<epoch>-<seq>` (seq as a decimal string, no precision loss), or null. */
export function parseEventId(id) {
  if (typeof id !== 'string') return null;
  const m = ID_RE.exec(id);
  if (!m) return null;
  return { epoch: m[1], seq: m[2].replace(/^0+(?=.)/, '') };
}

/** Compares two decimal strings without converting them to numbers (seq can exceed 2^53). */
export function compareSeq(a, b) {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The delay before the next attempt: the hint when the server gave one (capped at maxHintMs),
 * else uniform in [0, min(maxDelayMs, firstDelayMs * 2^attempt)] (full jitter).
 * @param {number} attempt failed attempts since the last healthy connection (0 right after it dropped)
 */
export function nextDelay(attempt, { firstDelayMs = DEFAULTS.firstDelayMs, maxDelayMs = DEFAULTS.maxDelayMs,
  maxHintMs = DEFAULTS.maxHintMs, hintMs = null, random = Math.random } = {}) {
  if (hintMs != null && Number.isFinite(hintMs)) {
    return Math.max(0, Math.min(Math.round(hintMs), maxHintMs));
  }
  return Math.floor(random() * (ceiling(attempt, firstDelayMs, maxDelayMs) + 1));
}

/** min(maxDelayMs, firstDelayMs * 2^attempt), without overflowing. */
export function ceiling(attempt, firstDelayMs = DEFAULTS.firstDelayMs, maxDelayMs = DEFAULTS.maxDelayMs) {
  if (attempt >= 30) return maxDelayMs;
  return Math.min(maxDelayMs, firstDelayMs * 2 ** Math.max(0, attempt));
}

/** The `retryMs` of a 1012/1013 close reason `{"retryMs":N}`, or null. */
export function parseRetryHint(code, reason) {
  if (!HINT_CODES.has(code) || typeof reason !== 'string' || reason === '') return null;
  try {
    const r = JSON.parse(reason);
    return r && Number.isFinite(r.retryMs) && r.retryMs >= 0 ? r.retryMs : null;
  } catch {
    return null;
  }
}

/**
 * The URL of a stream: `ws(s)://host/prefix/v1/live?topic=A@ID&topic=B@` (or `http(s)://.../v1/sse?...`).
 * `cursors` maps each topic to the ID to resume after, or null for live only.
 */
/** The close code of a session whose token expired without a refresh (see the protocol README). */
export const TOKEN_EXPIRED = 4001;

export function streamUrl(base, transport, cursors, accessToken) {
  const u = baseUrl(base);
  const secure = u.protocol === 'https:' || u.protocol === 'wss:';
  const scheme = transport === 'sse' ? (secure ? 'https:' : 'http:') : (secure ? 'wss:' : 'ws:');
  const prefix = u.pathname.replace(/\/+$/, '');
  // Topic names and IDs use characters that need no escaping ([A-Za-z0-9_.:-], [0-9a-z-]).
  const q = Object.entries(cursors).map(([t, id]) => `topic=${t}@${id ?? ''}`);
  if (accessToken) q.push('access_token=' + encodeURIComponent(accessToken));
  return `${scheme}//${u.host}${prefix}${transport === 'sse' ? SSE_PATH : LIVE_PATH}?${q.join('&')}`;
}

function baseUrl(base) {
  const loc = globalThis.location && globalThis.location.href;
  if (base == null || base === '') {
    if (!loc) throw new TypeError('url: required outside a browser page');
    base = loc;
  }
  try {
    return loc ? new URL(String(base), loc) : new URL(String(base));
  } catch {
    throw new TypeError(`url: ${base} (expected: an absolute http(s) or ws(s) URL)`);
  }
}

/**
 * The resume position and duplicate guard of one topic. `last` is the ID the next connection
 * resumes after: the last event delivered, else the position the server confirmed.
 */
export class TopicCursor {
  constructor(topic, start = null) {
    this.topic = topic;
    this.last = start;
    this.confirmed = false; // `subscribed` arrived on the current connection
  }

  /**
   * A live-only subscription starts at the position the server confirmed: its `id` (servers
   * before that field: the head, or `<epoch>-0` for a topic never written), so the next
   * reconnect misses nothing published while away.
   */
  subscribed(frame) {
    if (this.last == null) {
      if (frame.id && parseEventId(frame.id)) this.last = frame.id;
      else if (frame.head) this.last = frame.head;
      else if (frame.epoch) this.last = `${frame.epoch}-0`;
    }
  }

  /** 'accept' (deliver), 'duplicate' (not newer: drop), 'foreign' (another epoch, no reset before it: drop). */
  offer(id) {
    const n = parseEventId(id);
    if (!n) return 'invalid';
    const l = parseEventId(this.last);
    if (l) {
      if (l.epoch !== n.epoch) return 'foreign'; // only a reset may move a topic to another history
      if (compareSeq(n.seq, l.seq) <= 0) return 'duplicate';
    }
    this.last = id;
    return 'accept';
  }

  /** The server replaced the replay: continue after `id`, whatever its epoch. */
  reset(id) {
    this.last = id;
  }
}

function normalizeTopics(topics) {
  const entries = Array.isArray(topics) ? topics.map((t) => [t, null])
    : topics && typeof topics === 'object' ? Object.entries(topics) : null;
  if (!entries || entries.length === 0) {
    throw new TypeError('topics: expected a non-empty array of names or an object { name: lastId | null }');
  }
  const seen = new Set();
  for (const [t, id] of entries) {
    if (typeof t !== 'string' || !TOPIC_RE.test(t)) {
      throw new TypeError(`topics: ${JSON.stringify(t)} (expected: 1-200 characters of [A-Za-z0-9_.:-])`);
    }
    if (seen.has(t)) throw new TypeError(`topics: ${t} is named twice`);
    seen.add(t);
    if (id != null && id !== '' && !parseEventId(id)) {
      throw new TypeError(`topics.${t}: ${JSON.stringify(id)} (expected: an event ID <epoch>-<seq> or null)`);
    }
  }
  return entries.map(([t, id]) => [t, id || null]);
}

// ---------------------------------------------------------------------------------------------
// The subscription.

/**
 * Follows `options.topics` on the server at `url` until `close()`. The first attempt starts at
 * once; see README.md for the reconnect rule.
 * @returns {Subscription}
 */
export function subscribe(url, options = {}) {
  return new Subscription(url, options);
}

export class Subscription {
  #base;
  #o;
  #cursors = new Map();
  #state = 'connecting';
  #transport = null;
  #conn = null; // the current connection attempt
  #timer = null; // the pending reconnect
  #attempt = 0; // failed attempts since the last healthy connection
  #wsFailures = 0; // 'auto': WebSocket attempts in a row that got no frame
  #wsWorked = false; // 'auto': a WebSocket of this subscription got a frame
  #sseWorked = false;
  #onlineTarget = null;
  #lastExpiredAt = null; // when a 4001 last made this subscription reconnect at once
  #refused = null; // { token } of an attempt the server refused with 401/403
  #onOnline = () => this.reconnect();
  #stats = { attempts: 0, connects: 0, events: 0, duplicatesDropped: 0, foreignDropped: 0, resets: 0 };

  constructor(url, options) {
    const transport = options.transport ?? 'auto';
    if (!['auto', 'websocket', 'sse'].includes(transport)) {
      throw new TypeError(`transport: ${transport} (expected: 'auto', 'websocket' or 'sse')`);
    }
    const o = { ...DEFAULTS, ...options, transport };
    for (const k of ['firstDelayMs', 'maxDelayMs', 'maxHintMs', 'connectTimeoutMs', 'wsFailuresBeforeSse']) {
      if (!Number.isFinite(o[k]) || o[k] < 0) throw new TypeError(`${k}: ${o[k]} (expected: a number >= 0)`);
    }
    if (o.maxDelayMs < o.firstDelayMs) {
      throw new TypeError(`maxDelayMs: ${o.maxDelayMs} (expected: >= firstDelayMs ${o.firstDelayMs})`);
    }
    o.WebSocket ??= globalThis.WebSocket;
    o.EventSource ??= globalThis.EventSource;
    if (transport === 'websocket' && !o.WebSocket) throw new TypeError('WebSocket: no implementation (pass options.WebSocket)');
    if (transport === 'sse' && !o.EventSource) throw new TypeError('EventSource: no implementation (pass options.EventSource)');
    if (transport === 'auto' && !o.WebSocket && !o.EventSource) {
      throw new TypeError('no WebSocket or EventSource implementation (pass options.WebSocket or options.EventSource)');
    }
    o.random ??= Math.random;
    if (o.fetch === undefined) o.fetch = globalThis.fetch; // asks why an attempt that never opened failed (401/403?); null: never
    this.#o = o;
    this.#base = url;
    streamUrl(url, 'websocket', {}); // validates the URL now rather than on the first attempt
    for (const [t, id] of normalizeTopics(options.topics)) this.#cursors.set(t, new TopicCursor(t, id));

    // A browser that comes back online skips the wait (a laptop waking, a train leaving a tunnel).
    const target = o.onlineEvents === false ? null : (o.onlineEvents ?? globalThis);
    if (target && typeof target.addEventListener === 'function') {
      target.addEventListener('online', this.#onOnline);
      this.#onlineTarget = target;
    }
    // The first connect of a page is immediate (the 0-5 s jitter spreads REconnects after a drop),
    // but on the next tick so that the caller has `sub` before the first onState.
    this.#timer = setTimeout(() => this.#connect(), 0);
  }

  /** 'connecting' | 'open' | 'waiting' | 'closed'. */
  get state() {
    return this.#state;
  }

  /** 'websocket' or 'sse' for the current or last attempt, null before the first. */
  get transport() {
    return this.#transport;
  }

  /** Every topic's resume ID: `{ topic: id | null }` (null: live only, nothing confirmed yet). Store it to resume later. */
  lastIds() {
    return Object.fromEntries([...this.#cursors].map(([t, c]) => [t, c.last]));
  }

  /** Counters: attempts, connects, events, duplicatesDropped, foreignDropped, resets. */
  stats() {
    return { ...this.#stats, failedAttempts: this.#attempt };
  }

  /**
   * Sends a new token in band (`{"type":"auth","token":…}`) on the open WebSocket, so a long
   * session outlives its first token; the server answers `authenticated`, or an `invalid_token`
   * error and the old token stays. Returns false (nothing sent) when no WebSocket is open: SSE
   * has no way up, its next reconnect takes the `accessToken` function's new token. Reconnects
   * always ask `accessToken` again, so it should return the new token too.
   */
  refresh(token) {
    if (typeof token !== 'string' || token === '') throw new TypeError('refresh: token must be a non-empty string');
    const c = this.#conn;
    if (!c || c.transport !== 'websocket' || !c.opened || c.done || !c.socket || c.socket.readyState !== 1) return false;
    c.socket.send(JSON.stringify({ type: 'auth', token }));
    return true;
  }

  /** While waiting to reconnect: try now (what the `online` event does). Otherwise nothing. */
  reconnect() {
    if (this.#state !== 'waiting') return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#connect();
  }

  /** Stops for good: no more callbacks after this returns. Idempotent. */
  close() {
    if (this.#state === 'closed') return;
    clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#onlineTarget) this.#onlineTarget.removeEventListener('online', this.#onOnline);
    const c = this.#conn;
    this.#conn = null;
    if (c) c.abort(1000);
    this.#setState('closed', {});
  }

  // ---- internals ----

  #setState(state, detail) {
    this.#state = state;
    this.#call('onState', state, detail);
  }

  #call(name, ...args) {
    const f = this.#o[name];
    if (typeof f !== 'function') return;
    try {
      f(...args);
    } catch (e) {
      // An application bug must not stop the subscription; report it where it can be seen.
      (globalThis.reportError ?? ((x) => console.error(`push-client: ${name} threw`, x)))(e);
    }
  }

  #pickTransport() {
    const o = this.#o;
    if (o.transport !== 'auto') return o.transport;
    if (!o.EventSource) return 'websocket';
    if (!o.WebSocket || this.#sseWorked) return 'sse';
    if (!this.#wsWorked && this.#wsFailures >= o.wsFailuresBeforeSse) return 'sse';
    return 'websocket';
  }

  async #connect() {
    this.#timer = null;
    if (this.#state === 'closed') return;
    const transport = this.#pickTransport();
    this.#transport = transport;
    this.#stats.attempts++;
    for (const c of this.#cursors.values()) c.confirmed = false;
    this.#setState('connecting', { attempt: this.#attempt, transport });
    const conn = new Connection(this, transport);
    this.#conn = conn;
    let token, headers;
    try {
      token = typeof this.#o.accessToken === 'function' ? await this.#o.accessToken() : this.#o.accessToken;
      headers = typeof this.#o.headers === 'function' ? await this.#o.headers() : this.#o.headers;
    } catch (e) {
      if (this.#conn === conn) this.#ended(conn, { code: ABNORMAL_CLOSURE, reason: 'accessToken/headers failed' });
      return;
    }
    if (this.#conn !== conn) return; // closed while the token was fetched
    if (this.#refused && token === this.#refused.token) {
      // the same answer would come back (protocol/README.md, Reconnecting 6)
      this.#call('onError', { code: 'access_denied', message: 'not retrying with the token the server refused' });
      this.close();
      return;
    }
    const cursors = Object.fromEntries([...this.#cursors].map(([t, c]) => [t, c.last]));
    conn.token = token;
    conn.headers = headers;
    conn.probeUrl = streamUrl(this.#base, 'sse', cursors, token);
    conn.start(streamUrl(this.#base, transport, cursors, token), headers);
  }

  // Called by the current Connection only.

  _options() {
    return this.#o;
  }

  _opened(conn) {
    if (conn !== this.#conn) return;
    this.#refused = null;
    this.#stats.connects++;
    this.#setState('open', { transport: conn.transport });
  }

  _frame(conn, text) {
    if (conn !== this.#conn) return;
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return; // not protocol v1; the server never sends it
    }
    if (!m || typeof m !== 'object') return;
    // This transport works here ('auto' keeps it).
    if (conn.transport === 'websocket') {
      this.#wsWorked = true;
      this.#wsFailures = 0;
    } else {
      this.#sseWorked = true;
    }
    if (m.type === 'error') {
      this.#call('onError', { code: m.code, message: m.message });
      return;
    }
    const c = this.#cursors.get(m.topic);
    if (!c) return; // a topic this subscription does not follow
    if (m.type === 'event') {
      const verdict = c.offer(m.id);
      if (verdict === 'accept') {
        this.#stats.events++;
        this.#call('onEvent', { topic: m.topic, id: m.id, ts: m.ts, data: m.data });
      } else if (verdict === 'duplicate') {
        this.#stats.duplicatesDropped++;
      } else if (verdict === 'foreign') {
        this.#stats.foreignDropped++;
      }
    } else if (m.type === 'subscribed') {
      c.subscribed(m);
      if (!c.confirmed) {
        c.confirmed = true;
        // Only a connection on which every topic is subscribed again, and that then stays up,
        // resets the backoff: one the server accepts and drops at once (a failing replay, a
        // "fix the client" close) must not make every client hammer it.
        if ([...this.#cursors.values()].every((x) => x.confirmed)) {
          conn.subscribedAt = Date.now();
          setTimeout(() => {
            if (this.#conn === conn) this.#attempt = 0;
          }, STABLE_MS);
        }
      }
      this.#call('onSubscribed', m.topic, { head: m.head ?? null, oldest: m.oldest ?? null, epoch: m.epoch ?? null,
        id: m.id ?? null });
    } else if (m.type === 'reset') {
      if (!parseEventId(m.id)) return;
      c.reset(m.id);
      this.#stats.resets++;
      this.#call('onReset', m.topic, m.reason, { id: m.id });
    }
  }

  /** The attempt is over (closed, failed, ended): schedule the next one. */
  _ended(conn, end) {
    this.#ended(conn, end);
  }

  #ended(conn, { code, reason, hintMs = null }) {
    if (conn !== this.#conn) return;
    this.#conn = null;
    if (this.#state === 'closed') return;
    if (conn.transport === 'websocket' && !conn.gotFrame) this.#wsFailures++;
    if (conn.transport === 'sse' && !conn.gotFrame && !this.#sseWorked && this.#o.transport === 'auto') {
      // SSE got nothing either: the server may simply be down, so give the WebSocket another try.
      this.#wsFailures = Math.max(0, this.#o.wsFailuresBeforeSse - 1);
    }
    const hint = hintMs ?? parseRetryHint(code, reason);
    if (conn.subscribedAt != null && Date.now() - conn.subscribedAt >= STABLE_MS) this.#attempt = 0;
    const attempt = this.#attempt;
    const o = this.#o;
    // 4001: the token expired, a planned close; reconnect at once (accessToken is asked again),
    // at most once per STABLE_MS: a source that hands out the expired token again gets the backoff
    const now = Date.now();
    const expired = code === TOKEN_EXPIRED && conn.opened
      && (this.#lastExpiredAt == null || now - this.#lastExpiredAt >= STABLE_MS);
    if (expired) this.#lastExpiredAt = now;
    const delayMs = expired ? 0 : nextDelay(attempt, { ...o, hintMs: hint, random: o.random });
    if (!expired) this.#attempt = attempt + 1;
    this.#timer = setTimeout(() => this.#connect(), delayMs);
    this.#setState('waiting', {
      delayMs, until: Date.now() + delayMs, attempt, code, reason: reason ?? '', hint: hint != null,
      transport: conn.transport,
    });
    // A WebSocket or EventSource that never opened does not say why: a refusal (401/403) looks
    // like a server that is down. Ask once over plain HTTP, with the same URL and token.
    if (!conn.opened && code === ABNORMAL_CLOSURE && typeof o.fetch === 'function' && conn.probeUrl) {
      this.#probe(conn);
    }
  }

  async #probe(conn) {
    let r;
    const abort = new AbortController();
    const t = setTimeout(() => abort.abort(), this.#o.connectTimeoutMs);
    try {
      r = await this.#o.fetch(conn.probeUrl, {
        headers: { ...(conn.headers || {}), Accept: 'text/event-stream' }, signal: abort.signal,
        credentials: this.#o.withCredentials ? 'include' : 'same-origin',
      });
    } catch {
      return; // down, or unreadable (a browser hides a refused cross-origin answer): the backoff goes on
    } finally {
      clearTimeout(t);
    }
    if (r.status !== 401 && r.status !== 403) {
      abort.abort(); // a stream (200) or another answer: not a refusal, nothing more to read
      return;
    }
    let code = null;
    try {
      code = (await r.json()).error ?? null;
    } catch { /* the status alone tells */ }
    if (this.#state === 'closed' || this.#conn) return; // closed meanwhile, or another attempt runs
    this.#call('onError', { status: r.status, code, message: `the server refused the subscription: ${r.status} ${code ?? ''}`.trim() });
    if (typeof this.#o.accessToken === 'function') {
      this.#refused = { token: conn.token }; // the next attempt goes only with another token
    } else {
      this.close(); // no other token to try
    }
  }
}

/** One attempt over one transport; reports to its Subscription, which ignores it once superseded. */
class Connection {
  constructor(sub, transport) {
    this.sub = sub;
    this.transport = transport;
    this.gotFrame = false;
    this.opened = false;
    this.done = false;
    this.socket = null;
    this.timer = null;
  }

  start(url, headers) {
    const o = this.sub._options();
    // No frame in time (a proxy holding the request, a black-holed SYN): give up and back off.
    this.timer = setTimeout(() => {
      if (!this.gotFrame) this.fail(ABNORMAL_CLOSURE, `no frame within ${o.connectTimeoutMs} ms`);
    }, o.connectTimeoutMs);
    try {
      if (this.transport === 'websocket') this.#startWs(o, url, headers);
      else this.#startSse(o, url, headers);
    } catch (e) {
      // e.g. a SecurityError for ws:// from an https page; the message may not name the URL (token).
      this.fail(ABNORMAL_CLOSURE, `cannot open: ${e && e.name ? e.name : 'error'}`);
    }
  }

  #startWs(o, url, headers) {
    // A third argument is what Node's `ws` takes for headers; browsers ignore it.
    const ws = headers ? new o.WebSocket(url, [], { headers }) : new o.WebSocket(url);
    this.socket = ws;
    ws.onopen = () => {
      if (this.done) return;
      this.opened = true;
      this.sub._opened(this);
    };
    ws.onmessage = (e) => {
      if (this.done) return;
      if (typeof e.data === 'string') {
        this.frameSeen();
        this.sub._frame(this, e.data);
      }
    };
    ws.onclose = (e) => this.finish({ code: e.code || ABNORMAL_CLOSURE, reason: e.reason || '' });
    ws.onerror = () => {}; // a close event always follows
  }

  #startSse(o, url, headers) {
    const init = { withCredentials: !!o.withCredentials };
    if (headers) init.headers = headers;
    const es = new o.EventSource(url, init);
    this.socket = es;
    const frame = (e) => {
      if (this.done) return;
      this.frameSeen();
      this.sub._frame(this, e.data);
    };
    es.onopen = () => {
      if (this.done) return;
      this.opened = true;
      this.sub._opened(this);
    };
    es.onmessage = frame;
    es.addEventListener('subscribed', frame);
    es.addEventListener('reset', frame);
    // The server ends a stream (drain, overload) with `event: close` and {"code":1012,"retryMs":N}:
    // the same N as its `retry:` line, which EventSource does not expose.
    es.addEventListener('close', (e) => {
      if (this.done) return;
      let d = {};
      try {
        d = JSON.parse(e.data) || {};
      } catch { /* no hint then */ }
      // a hint is 1012's and 1013's: 4001's retry of 0 is for a plain EventSource, and taken as a
      // hint it would undo the guard against a token source that keeps handing out expired tokens
      const hint = HINT_CODES.has(d.code) && Number.isFinite(d.retryMs) && d.retryMs >= 0 ? d.retryMs : null;
      this.finish({ code: Number.isFinite(d.code) ? d.code : 1000, reason: typeof e.data === 'string' ? e.data : '', hintMs: hint });
    });
    // An error is a failed request, a non-200 or an ended stream. EventSource would retry on its
    // own without jitter or give up for good; this client closes it and runs its own backoff.
    es.onerror = () => this.finish({ code: ABNORMAL_CLOSURE, reason: this.opened ? 'stream ended' : 'cannot connect' });
  }

  frameSeen() {
    if (!this.gotFrame) {
      this.gotFrame = true;
      clearTimeout(this.timer);
    }
  }

  fail(code, reason) {
    this.finish({ code, reason });
  }

  /** Closes the socket (once) and reports the end. */
  finish(end) {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.#closeSocket(1000);
    this.sub._ended(this, end);
  }

  /** Closed by the application: no report. */
  abort(code) {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.#closeSocket(code);
  }

  #closeSocket(code) {
    const s = this.socket;
    if (!s) return;
    s.onopen = s.onmessage = s.onerror = s.onclose = null;
    try {
      if (this.transport === 'websocket') {
        if (s.readyState === 0 || s.readyState === 1) s.close(code);
      } else {
        s.close();
      }
    } catch { /* already closing */ }
  }
}

// ---------------------------------------------------------------------------------------------
// Publishing (for pages and tools; servers usually publish from their backend).

/**
 * POST /v1/topics/{topic}/events. Resolves `{ topic, id, duplicate }` (duplicate: a retry with the
 * same idempotencyKey, answered with the original ID); rejects with a PushError (`status`, `code`).
 */
export async function publish(url, topic, data, { idempotencyKey, accessToken, headers, fetch: f = globalThis.fetch, signal } = {}) {
  if (typeof topic !== 'string' || !TOPIC_RE.test(topic)) {
    throw new TypeError(`topic: ${JSON.stringify(topic)} (expected: 1-200 characters of [A-Za-z0-9_.:-])`);
  }
  const u = baseUrl(url);
  const scheme = u.protocol === 'wss:' || u.protocol === 'https:' ? 'https:' : 'http:';
  const target = `${scheme}//${u.host}${u.pathname.replace(/\/+$/, '')}/v1/topics/${topic}/events`;
  const h = { 'Content-Type': 'application/json', ...(headers || {}) };
  if (idempotencyKey) h['Idempotency-Key'] = idempotencyKey;
  if (accessToken) h.Authorization = `Bearer ${typeof accessToken === 'function' ? await accessToken() : accessToken}`;
  const res = await f(target, { method: 'POST', headers: h, body: JSON.stringify(data === undefined ? null : data), signal });
  let body = null;
  try {
    body = await res.json();
  } catch { /* not JSON: a proxy's page */ }
  if (res.status === 201 || res.status === 200) {
    return { topic: body.topic, id: body.id, duplicate: res.status === 200 };
  }
  const code = body && body.error ? body.error : 'http_' + res.status;
  throw new PushError(`publish to ${topic}: ${res.status} ${code}${body && body.message ? ': ' + body.message : ''}`,
    { status: res.status, code });
}
