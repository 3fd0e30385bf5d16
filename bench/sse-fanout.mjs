// Live fan-out to server-sent-event streams beside WebSocket, one driver for both: N subscribers of
// one topic over GET /v1/sse (or /v1/live), an HTTP publisher at a fixed rate, 2 s of warm-up, then
// a measured window; prints one JSON line as the peers driver's fanout.mjs does (server CPU ms per
// 1,000 deliveries = µs per delivery, p50/p99 publish→deliver). bench/sse-fanout.sh runs it.
// sse-multi: each stream also has a second topic that gets no events (a multi-topic stream, whose
// id: line is its cursor, as the JS client opens for several topics).
//   node bench/sse-fanout.mjs --transport sse|sse-multi|websocket --port P --subs N --rate R --seconds S --pids PID
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sseMessages, sseEventJson } from './sse-messages.mjs';
const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf('--' + k); return i >= 0 ? argv[i + 1] : d; };
const transport = opt('transport', 'sse'), port = Number(opt('port')), subs = Number(opt('subs', 1000));
const rate = Number(opt('rate', 100)), seconds = Number(opt('seconds', 10)), topic = opt('topic', 'bench');
const size = Number(opt('size', 100)), pids = (opt('pids', '') || '').split(',').filter(Boolean);
const require = createRequire((process.env.PEERS_NODE || '/tmp/peers-node') + '/node_modules/');
const WebSocket = require('ws');
const now = () => performance.timeOrigin + performance.now();
if (process.env.SSE_FANOUT_WORKER) {
  // the subscribers, in a process of their own as in the peers driver
  let count = 0, opened = 0, closed = 0; const lat = [];
  const onEvent = json => { const f = JSON.parse(json); if (f.type !== 'event') return; count++; if (count % 7 === 0) lat.push(now() - f.data.ts); };
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  for (let i = 0; i < subs; i++) {
    if (transport === 'sse' || transport === 'sse-multi') {
      const topics = transport === 'sse' ? `topic=${topic}` : `topic=${topic}&topic=${topic}-quiet`;
      http.get({ host: '127.0.0.1', port, path: `/v1/sse?${topics}`, agent }, r => {
        opened++;
        sseMessages(r, msg => { const json = sseEventJson(msg); if (json) onEvent(json); });
        r.on('end', () => closed++);
      }).on('error', () => closed++);
    } else {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/live?topic=${topic}&after=`);
      ws.on('open', () => opened++); ws.on('close', () => closed++); ws.on('error', () => {});
      ws.on('message', d => onEvent(d.toString()));
    }
    if (i % 200 === 199) await new Promise(r => setTimeout(r, 20));
  }
  const t00 = Date.now();
  while (opened < subs && Date.now() - t00 < 30000) await new Promise(r => setTimeout(r, 50));
  process.send({ ready: opened });
  process.on('message', m => {
    if (m === 'mark') { count = 0; lat.length = 0; }
    if (m === 'report') process.send({ count, closed, lat }, () => process.exit(0));
  });
} else {
  // the publisher, the window and the report
  setInterval(() => {}, 1000); // keeps the parent alive while the worker connects
  const kid = fork(fileURLToPath(import.meta.url), argv, { env: { ...process.env, SSE_FANOUT_WORKER: '1' } });
  kid.on('exit', code => { if (code) { console.error(`subscriber worker exited with ${code}`); process.exit(1); } });
  const opened = await new Promise(r => kid.once('message', m => r(m.ready)));
  const cpu = () => pids.reduce((s, p) => { try { const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' '); return s + Number(f[11]) + Number(f[12]); } catch { return s; } }, 0);
  const pad = 'x'.repeat(Math.max(0, size - 30));
  let sent = 0, failed = 0, inflight = 0;
  const fire = () => {
    if (inflight > 200) { failed++; return; }
    inflight++;
    fetch(`http://127.0.0.1:${port}/v1/topics/${topic}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ts: now(), pad }) })
      .then(r => { r.arrayBuffer(); if (r.status >= 300) failed++; else sent++; }).catch(() => failed++).finally(() => inflight--);
  };
  const tick = 10; const perTick = rate * tick / 1000; let carry = 0;
  const run = ms => new Promise(res => { const t0 = Date.now(); const iv = setInterval(() => { carry += perTick; while (carry >= 1) { fire(); carry--; } if (Date.now() - t0 >= ms) { clearInterval(iv); res(); } }, tick); });
  await run(2000);
  kid.send('mark'); sent = 0;
  const c0 = cpu(), t0 = now();
  await run(seconds * 1000);
  await new Promise(r => setTimeout(r, 500));
  const c1 = cpu();
  const { count, closed, lat } = await new Promise(r => { kid.once('message', r); kid.send('report'); });
  lat.sort((a, b) => a - b);
  const pct = q => lat.length ? +lat[Math.min(lat.length - 1, Math.floor(q * lat.length))].toFixed(2) : null;
  const cpuMs = (c1 - c0) * 10; // clock ticks of 10 ms
  console.log(JSON.stringify({ transport, subs, connected: opened, closed, rate, published: sent, publishFailed: failed,
    deliveredShare: +(count / Math.max(1, sent * subs)).toFixed(3), p50ms: pct(0.5), p99ms: pct(0.99),
    serverCpuMsPer1kDeliveries: count ? +(cpuMs * 1000 / count).toFixed(2) : null }));
  process.exit(0);
}
