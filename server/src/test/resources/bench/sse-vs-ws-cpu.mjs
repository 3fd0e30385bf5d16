// Server CPU per delivery, SSE vs WebSocket, against one running server.
// node server/src/test/resources/bench/sse-vs-ws-cpu.mjs --port P --pid PID --subs 1000 --rate 50 --seconds 10 --transport sse|ws
import http from 'node:http';
import fs from 'node:fs';
import { createRequire } from 'node:module';
// ws from clients/js/node_modules (cd clients/js && npm ci)
const require = createRequire(new URL('../../../../../clients/js/package.json', import.meta.url));
const WebSocket = require('ws');
const argv = process.argv.slice(2);
const opt = (k, d) => { const i = argv.indexOf('--' + k); return i >= 0 ? argv[i + 1] : d; };
const port = Number(opt('port')), pid = Number(opt('pid')), subs = Number(opt('subs', 1000));
const rate = Number(opt('rate', 50)), seconds = Number(opt('seconds', 10)), transport = opt('transport', 'sse');
const topic = `cpu-${transport}-${Date.now()}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let count = 0, opened = 0;
const conns = [];
for (let i = 0; i < subs; i++) {
  if (transport === 'ws') {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/live?topic=${topic}&after=`);
    ws.on('message', (d) => { const t = d.toString(); if (t.startsWith('{"type":"event"')) count++; else if (t.includes('"subscribed"')) opened++; });
    ws.on('error', () => {});
    conns.push(ws);
  } else {
    const req = http.get({ host: '127.0.0.1', port, path: `/v1/sse?topic=${topic}&after=`, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        for (let j = chunk.indexOf('"type":"event"'); j >= 0; j = chunk.indexOf('"type":"event"', j + 1)) count++;
        if (chunk.includes('event: subscribed')) opened++;
      });
    });
    req.on('error', () => {});
    conns.push(req);
  }
  if (i % 100 === 99) await new Promise((r) => setTimeout(r, 30));
}
const t0 = Date.now();
while (opened < subs && Date.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 50));
const cpu = () => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); };
await new Promise((r) => setTimeout(r, 1000));
count = 0;
const c0 = cpu();
const publish = () => new Promise((resolve) => {
  const body = JSON.stringify({ ts: Date.now(), pad: 'x'.repeat(70) });
  const req = http.request({ host: '127.0.0.1', port, path: `/v1/topics/${topic}/events`, method: 'POST', agent,
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => { res.resume(); res.on('end', resolve); });
  req.on('error', resolve);
  req.end(body);
});
const events = rate * seconds;
const start = Date.now();
for (let n = 0; n < events; n++) {
  await publish();
  const due = start + ((n + 1) * 1000) / rate;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const expected = events * subs;
const tEnd = Date.now();
while (count < expected && Date.now() - tEnd < 20000) await new Promise((r) => setTimeout(r, 50));
const ticks = cpu() - c0; // clock ticks (1/100 s)
console.log(JSON.stringify({ transport, subs, opened, events, delivered: count, expected,
  serverCpuMs: ticks * 10, cpuUsPerDelivery: +((ticks * 10000) / count).toFixed(3) }));
for (const c of conns) { try { transport === 'ws' ? c.terminate() : c.destroy(); } catch {} }
process.exit(0);
