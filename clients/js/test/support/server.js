// The real server for the tests: server/target/push-server.jar as a child process on a free
// loopback port with a temporary data directory, restartable on the same port and data.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, mkdirSync, createWriteStream, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

const here = dirname(fileURLToPath(import.meta.url));
export const OUTPUT_DIR = resolve(here, '../../test-output');

/** The fat jar: $PUSH_SERVER_JAR (set by the Maven module), else the one the repository builds. */
export function jarPath() {
  return process.env.PUSH_SERVER_JAR || resolve(here, '../../../../server/target/push-server.jar');
}

/**
 * Why the server tests cannot run, or null. A missing jar skips them when run by hand (`npm test`
 * before `mvn package`), but fails them when the build named the jar (PUSH_SERVER_JAR).
 */
export function serverSkipReason() {
  if (existsSync(jarPath())) return null;
  if (process.env.PUSH_SERVER_JAR) throw new Error(`PUSH_SERVER_JAR=${jarPath()} does not exist`);
  return `no ${jarPath()} (build it: mvn -q -pl server -am -DskipTests package)`;
}

export async function freePort() {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address();
  s.close();
  await once(s, 'close');
  return port;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `f` until it returns a truthy value; throws `message` after `timeoutMs`. */
export async function waitFor(f, timeoutMs, message) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms: ${typeof message === 'function' ? message() : message}`);
    await sleep(50);
  }
}

/**
 * The environment without PUSH_* variables: the server reads every PUSH_* as configuration and
 * exits 2 on an unknown key, and ours (PUSH_SERVER_JAR, PUSH_REQUIRE_BROWSER) are not its keys.
 */
function serverEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PUSH_')));
}

export class JarServer {
  /**
   * Short drain settings and no warm-ups (live ~4 s, replay 1-3 s of CPU a start; the server's tests have them), so
   * that a restart takes a couple of seconds, not the production 5-25 s;
   * and hints from 0 rather than after the node's own start (drain.expectRestart, tested on the server): the client
   * under test honours whatever hint it gets, and its tests restart the jar themselves.
   */
  static FAST = ['--set', 'drain.lbGrace=0s', '--set', 'drain.minWindow=1s', '--set', 'drain.deadline=5s',
    '--set', 'drain.expectRestart=false', '--set', 'reconnect.rampAfterStart=false', '--set', 'fanout.warmup=false',
    '--set', 'store.replayWarmup=false'];

  constructor(name, args = JarServer.FAST) {
    this.name = name;
    this.args = args;
    this.dataDir = mkdtempSync(join(tmpdir(), 'push-js-test-'));
    this.port = 0;
    this.proc = null;
    this.starts = 0;
    mkdirSync(OUTPUT_DIR, { recursive: true });
    this.log = createWriteStream(join(OUTPUT_DIR, `${name}-server.log`));
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts (again, on the same port and data directory) and waits for /readyz. */
  async start() {
    if (!this.port) this.port = await freePort();
    this.starts++;
    this.log.write(`---- start ${this.starts} on port ${this.port}\n`);
    const proc = spawn('java', ['-Dchronicle.analytics.disable=true', '-jar', jarPath(), '--host', '127.0.0.1',
      '--port', String(this.port), '--data-dir', this.dataDir, ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() });
    proc.stdout.pipe(this.log, { end: false });
    proc.stderr.pipe(this.log, { end: false });
    this.proc = proc;
    this.exited = once(proc, 'exit');
    await waitFor(async () => {
      if (proc.exitCode != null) throw new Error(`server exited with ${proc.exitCode}; see test-output/${this.name}-server.log`);
      try {
        return (await fetch(this.url + '/readyz')).status === 200;
      } catch {
        return false;
      }
    }, 30000, 'server ready');
  }

  /** SIGTERM: the drain (1012 with hints), then the exit. */
  async stop() {
    if (!this.proc || this.proc.exitCode != null) return;
    this.proc.kill('SIGTERM');
    await this.exited;
  }

  /** SIGKILL: no drain, no hint; what is acknowledged is on disk anyway. */
  async kill9() {
    if (!this.proc || this.proc.exitCode != null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  async restartGracefully() {
    await this.stop();
    await this.start();
  }

  async restartAfterCrash() {
    await this.kill9();
    await this.start();
  }

  async close() {
    await this.kill9();
    this.log.end();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Publishes to `topics` in turn until stopped, each event retried with its Idempotency-Key until
 * it is acknowledged (201, or 200 with the original ID after a restart), so that every event the
 * publisher counts as acknowledged is stored exactly once.
 */
export class Publisher {
  constructor(url, topics, { intervalMs = 20 } = {}) {
    this.url = url;
    this.topics = topics;
    this.intervalMs = intervalMs;
    this.acked = Object.fromEntries(topics.map((t) => [t, []]));
    this.running = false;
    this.n = 0;
    this.failures = 0;
  }

  start() {
    this.running = true;
    this.done = this.#loop();
    return this;
  }

  async stop() {
    this.running = false;
    await this.done;
  }

  async publishOne(topic) {
    const key = `k-${topic}-${this.n++}-${Math.random().toString(36).slice(2)}`;
    for (;;) {
      try {
        const res = await fetch(`${this.url}/v1/topics/${topic}/events`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
          body: JSON.stringify({ n: this.n, key }),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status === 201 || res.status === 200) {
          const { id } = await res.json();
          this.acked[topic].push(id);
          return id;
        }
        await res.arrayBuffer();
      } catch {
        // refused or cut: the server is restarting; retry with the same key
      }
      this.failures++;
      await sleep(50);
    }
  }

  async #loop() {
    let i = 0;
    while (this.running) {
      await this.publishOne(this.topics[i++ % this.topics.length]);
      await sleep(this.intervalMs);
    }
  }

  total() {
    return Object.values(this.acked).reduce((n, a) => n + a.length, 0);
  }
}

/** The seq of an event ID. */
export const seqOf = (id) => Number(id.slice(id.lastIndexOf('-') + 1));

/** IDs acknowledged for a topic, in sequence order (publishes to one topic are sequential here anyway). */
export const inOrder = (ids) => [...ids].sort((x, y) => seqOf(x) - seqOf(y));
