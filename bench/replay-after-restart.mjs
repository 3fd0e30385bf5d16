// The first replays after a restart, the reconnect herd's load: one subscriber resumes a topic of
// N kept events from its start on a server that has just become ready, then again; prints server
// CPU µs per replayed event for each, split into event loops, JIT compiler threads and the rest
// (from /proc/PID/task/*/stat). Usage (bench/replay-after-restart.sh runs it):
//   node bench/replay-after-restart.mjs --port P --pid PID --topic T --events N [--replays 2] [--transport sse]
// --transport sse: the replays are server-sent event streams (GET /v1/sse, what a browser's
// EventSource resumes with) instead of WebSocket connections; sse-multi: streams that also follow
// a quiet second topic (a multi-topic stream, whose id: line is its cursor).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import { sseMessages, sseEventJson } from './sse-messages.mjs';
const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf('--' + k); return i >= 0 ? argv[i + 1] : d; };
const port = Number(opt('port')), pid = opt('pid'), topic = opt('topic'), N = Number(opt('events'));
const replays = Number(opt('replays', 2));
const transport = opt('transport', 'websocket');
// the peers driver's npm packages (its bench.sh installs them; PEERS_NODE as there)
const require = createRequire((process.env.PEERS_NODE || '/tmp/peers-node') + '/node_modules/');
const WebSocket = require('ws');
const threads = () => {
  const split = { loops: 0, jit: 0, other: 0 };
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]);
      const k = /^multiThreadIo|EventLoop/.test(name) ? 'loops' : /^C[12] Compiler/.test(name) ? 'jit' : 'other';
      split[k] += ticks;
    } catch { /* a thread that ended */ }
  }
  return split;
};
const info = await new Promise((res, rej) => http.get({ host: '127.0.0.1', port, path: `/v1/topics/${topic}` }, r => {
  let b = ''; r.on('data', d => b += d); r.on('end', () => res(JSON.parse(b)));
}).on('error', rej));
// Each calls seen(seq) per event (true once the last came) and res() when done or cut short.
const websocket = (seen, res, rej) => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/live?topic=${topic}@${info.epoch}-0`);
  ws.on('message', raw => {
    const f = JSON.parse(raw.toString());
    if (f.type === 'reset') { console.error('reset: ' + raw); ws.terminate(); res(); return; }
    if (f.type !== 'event') return;
    if (seen(Number(f.id.split('-')[1]))) { ws.close(); res(); }
  });
  ws.on('error', rej);
  ws.on('close', () => res()); // closed early: the counts say how far it got
  setTimeout(() => { ws.terminate(); res(); }, 120000);
};
const sse = (seen, res, rej) => {
  const topics = transport === 'sse-multi' ? `topic=${topic}@${info.epoch}-0&topic=${topic}-quiet`
    : `topic=${topic}&after=${info.epoch}-0`;
  const req = http.get({ host: '127.0.0.1', port, path: `/v1/sse?${topics}` }, r => {
    sseMessages(r, msg => {
      if (msg.startsWith('event: reset')) { console.error('reset: ' + msg); req.destroy(); res(); return false; }
      const json = sseEventJson(msg);
      if (json && seen(Number(JSON.parse(json).id.split('-')[1]))) { req.destroy(); res(); return false; }
      return true;
    });
    r.on('end', () => res());
  });
  req.on('error', e => e.code === 'ECONNRESET' ? res() : rej(e));
  setTimeout(() => { req.destroy(); res(); }, 120000);
};
const results = [];
for (let k = 0; k < replays; k++) {
  const c0 = threads(); const t0 = performance.now();
  let got = 0, bad = 0, last = 0;
  const seen = seq => { if (seq !== last + 1) bad++; last = seq; return ++got === N; };
  await new Promise((res, rej) => transport.startsWith('sse') ? sse(seen, res, rej) : websocket(seen, res, rej));
  const c1 = threads(); const us = x => +((c1[x] - c0[x]) * 10000 / Math.max(1, got)).toFixed(2);
  results.push({ replay: k + 1, received: got, outOfOrder: bad, seconds: +((performance.now() - t0) / 1000).toFixed(2),
    cpuUsPerEvent: +(us('loops') + us('jit') + us('other')).toFixed(2), loops: us('loops'), jit: us('jit'), other: us('other') });
}
console.log(JSON.stringify({ transport, events: N, results }));
process.exit(0);
