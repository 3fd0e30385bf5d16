// Types of push-client.js (protocol v1).

/** An event ID `<epoch>-<seq>`; treat it as opaque: store the last one per topic and hand it back. */
export type EventId = string;

export type State = 'connecting' | 'open' | 'waiting' | 'closed';
export type Transport = 'websocket' | 'sse';
export type ResetReason = 'expired' | 'unknown_epoch' | 'future' | (string & {});

export interface PushEvent<T = unknown> {
  topic: string;
  id: EventId;
  /** The server's append time, epoch milliseconds. */
  ts: number;
  /** The published JSON value. */
  data: T;
}

export interface ConnectingDetail { attempt: number; transport: Transport }
export interface OpenDetail { transport: Transport }
export interface WaitingDetail {
  /** The wait before the next attempt. */
  delayMs: number;
  /** `Date.now()` at which the next attempt starts (for a countdown). */
  until: number;
  /** Failed attempts since the last healthy connection, before this one. */
  attempt: number;
  /** The WebSocket close code (1006: no close frame; SSE: the `event: close` code, else 1006). */
  code: number;
  reason: string;
  /** Whether delayMs is the server's hint rather than the client's own backoff. */
  hint: boolean;
  transport: Transport;
}
export type StateDetail = ConnectingDetail | OpenDetail | WaitingDetail | Record<string, never>;

export interface SubscribeOptions {
  /** Names (live only), or `{ name: lastId | null }` to resume each topic after its ID. */
  topics: string[] | Record<string, EventId | null>;
  /** Default 'auto': WebSocket, SSE when WebSocket cannot be opened at all (see README). */
  transport?: 'auto' | Transport;
  /** Each event ID once per topic, in order. */
  onEvent?: (event: PushEvent) => void;
  /** The topic's history could not be replayed in full: reload its state; events continue after `detail.id`. */
  onReset?: (topic: string, reason: ResetReason, detail: { id: EventId }) => void;
  onState?: (state: State, detail: StateDetail) => void;
  /** The server confirmed a topic on this connection. */
  /** `id`: the position the subscription starts from (null from a server older than that field). */
  onSubscribed?: (topic: string, info: { head: EventId | null; oldest: EventId | null; epoch: string | null;
    id: EventId | null }) => void;
  /**
   * An in-band `error` frame; or an attempt refused with 401/403 (`status` set, `code` the server's
   * error, e.g. `invalid_token`); or `code` 'access_denied' when the refused token came back again.
   */
  onError?: (error: { code: string | null; message: string; status?: number }) => void;
  /** Asks why an attempt that never opened failed (default: globalThis.fetch; null: never). */
  fetch?: typeof fetch | null;
  /** Default 5000: the first reconnect after a drop waits uniform [0, firstDelayMs]. */
  firstDelayMs?: number;
  /** Default 60000: the doubling ceiling stops here. */
  maxDelayMs?: number;
  /** Default 300000: server hints are capped at this. */
  maxHintMs?: number;
  /** Default 10000: an attempt that received no frame by then is abandoned. */
  connectTimeoutMs?: number;
  /** Default 3: 'auto' switches to SSE after this many WebSocket attempts in a row got no frame (and none ever did). */
  wsFailuresBeforeSse?: number;
  /** Sent as the `access_token` query parameter (browsers cannot set headers on WebSocket/EventSource); called before each attempt when a function. */
  accessToken?: string | (() => string | Promise<string>);
  /** Extra request headers where the implementation supports them (Node's `ws`, some EventSource polyfills); browsers ignore them. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** EventSource `withCredentials` (cookies on a cross-origin SSE request). */
  withCredentials?: boolean;
  /** Defaults to globalThis.WebSocket; in Node 20 pass e.g. `(await import('ws')).WebSocket`. */
  WebSocket?: unknown;
  /** Defaults to globalThis.EventSource; in Node pass e.g. `(await import('eventsource')).EventSource`. */
  EventSource?: unknown;
  /** Where the `online` event is listened for (default globalThis in a browser); false: not at all. */
  onlineEvents?: EventTarget | false;
  /** The jitter source, [0, 1); for tests. */
  random?: () => number;
}

export interface SubscriptionStats {
  attempts: number;
  connects: number;
  events: number;
  duplicatesDropped: number;
  foreignDropped: number;
  resets: number;
  failedAttempts: number;
}

export declare class Subscription {
  readonly state: State;
  readonly transport: Transport | null;
  /** Every topic's resume ID (null: live only, nothing confirmed yet). Store it to resume later with `topics: lastIds()`. */
  lastIds(): Record<string, EventId | null>;
  stats(): SubscriptionStats;
  /** While waiting: try now. */
  reconnect(): void;
  /** Sends a new token in band on the open WebSocket; false when none is open (nothing sent). */
  refresh(token: string): boolean;
  /** Stops for good; no callback after this returns. */
  close(): void;
}

/** Follows the topics on the server at `url` (http(s) or ws(s) base, with an optional path prefix) until close(). */
export declare function subscribe(url: string | URL, options: SubscribeOptions): Subscription;

export interface PublishOptions {
  idempotencyKey?: string;
  accessToken?: string | (() => string | Promise<string>);
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}
/** POST /v1/topics/{topic}/events; `duplicate` is true for a retry answered with the original ID. */
export declare function publish(url: string | URL, topic: string, data: unknown, options?: PublishOptions):
  Promise<{ topic: string; id: EventId; duplicate: boolean }>;

export declare class PushError extends Error {
  readonly status?: number;
  readonly code?: string;
}

export declare const DEFAULTS: Readonly<{
  firstDelayMs: number; maxDelayMs: number; maxHintMs: number; connectTimeoutMs: number; wsFailuresBeforeSse: number;
}>;
export declare const LIVE_PATH: '/v1/live';
export declare const SSE_PATH: '/v1/sse';
export declare const ABNORMAL_CLOSURE: 1006;
/** A connection subscribed this long is healthy (its drop restarts the backoff at 0); also the least time between two immediate 4001 reconnects. */
export declare const STABLE_MS: 3000;

// Low-level helpers.
export declare function parseEventId(id: string): { epoch: string; seq: string } | null;
export declare function compareSeq(a: string, b: string): -1 | 0 | 1;
export declare function ceiling(attempt: number, firstDelayMs?: number, maxDelayMs?: number): number;
export declare function nextDelay(attempt: number, options?: {
  firstDelayMs?: number; maxDelayMs?: number; maxHintMs?: number; hintMs?: number | null; random?: () => number;
}): number;
export declare function parseRetryHint(code: number, reason: string): number | null;
export declare function streamUrl(base: string | URL, transport: Transport, cursors: Record<string, EventId | null>,
  accessToken?: string): string;
export declare class TopicCursor {
  constructor(topic: string, start?: EventId | null);
  readonly topic: string;
  last: EventId | null;
  confirmed: boolean;
  subscribed(frame: { head?: EventId | null; epoch?: string | null; id?: EventId | null }): void;
  offer(id: EventId): 'accept' | 'duplicate' | 'foreign' | 'invalid';
  reset(id: EventId): void;
}

/** Close code of a session whose token expired (reconnects at once, resuming). */
export const TOKEN_EXPIRED: 4001;
