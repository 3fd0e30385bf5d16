// The client in a real browser: headless Chromium (Debian's /usr/bin/chromium) driven by
// puppeteer-core, against the real server behind a small front that serves /v1/client.js and
// /demo as the daemon will. Skips only when Chromium is absent and PUSH_REQUIRE_BROWSER is not true.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JarServer, serverSkipReason, waitFor, OUTPUT_DIR } from './support/server.js';
import { startFront } from './support/static.js';
import { restartScenario, assertExactlyOnce, assertRestartsSeen } from './support/scenario.js';

const CHROMIUM = process.env.PUSH_CHROMIUM || '/usr/bin/chromium';
const requireBrowser = process.env.PUSH_REQUIRE_BROWSER === 'true';

function browserSkipReason() {
  if (existsSync(CHROMIUM)) return serverSkipReason();
  if (requireBrowser) throw new Error(`PUSH_REQUIRE_BROWSER=true but there is no ${CHROMIUM} (apt-get install chromium chromium-driver)`);
  return `no ${CHROMIUM}: install Debian's chromium to run the browser tests (PUSH_REQUIRE_BROWSER=true makes this a failure)`;
}

const skip = browserSkipReason();

/** The page as a client for the shared scenario. */
function pageClient(page, topics) {
  const rec = () => page.evaluate(() => window.__rec);
  return {
    received: async () => {
      const r = await rec();
      return Object.fromEntries(topics.map((t) => [t, r.events[t] || []]));
    },
    subscribed: async () => {
      const r = await rec();
      return topics.every((t) => r.subscribed.includes(t));
    },
    states: async () => (await rec()).states,
  };
}

describe('in headless Chromium against the real server', { skip: skip ?? false, timeout: 120000 }, () => {
  let server, front, browser, profile, sse;
  before(async () => {
    const { default: puppeteer } = await import('puppeteer-core');
    server = new JarServer('browser');
    await server.start();
    front = await startFront(server.port);
    const probe = await fetch(`${server.url}/v1/sse?topic=probe`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    sse = probe && probe.status !== 404;
    if (probe && probe.body) probe.body.cancel().catch(() => {});
    profile = mkdtempSync(join(tmpdir(), 'push-js-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
  });
  after(async () => {
    if (browser) await browser.close();
    if (front) await front.close();
    if (server) await server.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  async function open(path) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(front.url + path, { waitUntil: 'load' });
    return { page, errors };
  }

  test('a page follows two topics over WebSocket through a graceful restart and a kill -9: every acknowledged event once, in order', async () => {
    const topics = ['web.a', 'web.b'];
    const { page, errors } = await open(`/test/page.html?topics=${topics.join(',')}&transport=websocket`);
    try {
      const result = await restartScenario(server, pageClient(page, topics), topics);
      assertExactlyOnce(result, topics);
      assertRestartsSeen(result.states);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  test('a reset reaches onReset in the page', async () => {
    const res = await fetch(`${server.url}/v1/topics/web.reset/events`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '1',
    });
    const { id } = await res.json();
    const { page } = await open('/test/page.html?topics=web.reset@zzz-5&transport=websocket');
    try {
      const resets = await waitFor(async () => {
        const r = await page.evaluate(() => window.__rec.resets);
        return r.length ? r : null;
      }, 10000, 'a reset');
      assert.deepEqual(resets, [{ topic: 'web.reset', reason: 'unknown_epoch', id }]);
    } finally {
      await page.close();
    }
  });

  test('the demo page shows the state, publishes from its box and lists the event with its ID', async () => {
    const { page, errors } = await open('/demo?topics=demo.t,news');
    try {
      await page.setViewport({ width: 1200, height: 720 });
      await page.waitForFunction(() => document.getElementById('state').textContent === 'open', { timeout: 10000 });
      await page.waitForFunction(() => document.querySelectorAll('#cursors tr').length === 2, { timeout: 10000 });
      for (const body of ['{"hello":"world"}', '{"order":42,"status":"shipped"}']) {
        await page.$eval('#pub-data', (el, v) => { el.value = v; }, body);
        await page.click('#publish');
        await page.waitForFunction((v) => [...document.querySelectorAll('#events td.data')].some((td) => td.textContent === v),
          { timeout: 10000 }, body);
      }
      const published = await page.$eval('#pub-msg', (el) => el.textContent);
      const id = published.replace('published ', '');
      assert.match(id, /^[0-9a-z]+-2$/);
      const lastId = await page.$eval('#cursors tr[data-topic="demo.t"] td.id', (el) => el.textContent);
      assert.equal(lastId, id);
      await page.screenshot({ path: join(OUTPUT_DIR, 'demo.png') });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  test('forced SSE in the page through a graceful restart and a kill -9: every acknowledged event once, in order', async (t) => {
    if (!sse) return t.skip('the server does not serve /v1/sse yet (404)');
    const topics = ['sse.a', 'sse.b'];
    const { page, errors } = await open(`/test/page.html?topics=${topics.join(',')}&transport=sse`);
    try {
      const result = await restartScenario(server, pageClient(page, topics), topics);
      assertExactlyOnce(result, topics);
      assertRestartsSeen(result.states);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  test("a plain EventSource in the page, without the client, gets every event with its id", async (t) => {
    if (!sse) return t.skip('the server does not serve /v1/sse yet (404)');
    const { page } = await open('/test/page.html?topics=unused&transport=websocket');
    try {
      await page.evaluate(() => {
        window.__plain = { subscribed: false, ids: [] };
        const es = new EventSource('/v1/sse?topic=plain.b');
        es.addEventListener('subscribed', () => { window.__plain.subscribed = true; });
        es.onmessage = (e) => window.__plain.ids.push([e.lastEventId, JSON.parse(e.data).id]);
      });
      await page.waitForFunction(() => window.__plain.subscribed, { timeout: 10000 });
      const ids = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/v1/topics/plain.b/events`, {
          method: 'POST', headers: { 'Content-Type': 'application/json' }, body: String(i),
        });
        ids.push((await res.json()).id);
      }
      await page.waitForFunction(() => window.__plain.ids.length === 3, { timeout: 10000 });
      assert.deepEqual(await page.evaluate(() => window.__plain.ids), ids.map((id) => [id, id]));
    } finally {
      await page.close();
    }
  });
});
