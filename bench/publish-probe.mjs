// Publish round trips while a fan-out runs, as a publishing service sees them: one keep-alive
// connection, N publishes (default 200) at R/s (default 20) to topic "probe" after a warm-up of 20
// (not counted), each timed from request to the end of the answer; prints p50/p90/p99/max in ms
// and how many were not 201 (and with PROBE_SLOW_MS=M, when each publish slower than M ms was sent). Usage: node bench/publish-probe.mjs PORT [N] [RATE] [WAIT-SECONDS]
import http from 'node:http';
const [port, n = 200, rate = 20, wait = 0] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const once = () => new Promise((resolve, reject) => {
  const t0 = process.hrtime.bigint();
  const req = http.request({ host: '127.0.0.1', port, path: '/v1/topics/probe/events', method: 'POST', agent,
    headers: { 'content-type': 'application/json' } }, res => {
    res.resume(); res.on('end', () => resolve([res.statusCode, Number(process.hrtime.bigint() - t0) / 1e6]));
  });
  req.setTimeout(10000, () => req.destroy(new Error('no answer within 10 s')));
  req.on('error', () => resolve([0, Number(process.hrtime.bigint() - t0) / 1e6])); // counted as failed
  req.end('{"probe":1}');
});
await new Promise(r => setTimeout(r, wait * 1000));
for (let i = 0; i < 20; i++) await once(); // warm-up, not counted
const ms = []; let failed = 0; const started = new Date();
for (let i = 0; i < n; i++) {
  const at = Date.now();
  const [status, t] = await once(); if (status !== 201) failed++; ms.push(t);
  if (process.env.PROBE_SLOW_MS && t > Number(process.env.PROBE_SLOW_MS)) {
    console.log(`slow: ${new Date(at).toISOString()} ${t.toFixed(2)} ms`);
  }
  await new Promise(r => setTimeout(r, 1000 / rate));
}
ms.sort((a, b) => a - b);
const q = p => ms[Math.min(ms.length - 1, Math.floor(ms.length * p))].toFixed(2);
console.log(`publish ms (keep-alive, n=${n}): p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${ms[ms.length - 1].toFixed(2)} failed ${failed}`
  + ` (${started.toISOString().slice(11, 23)} to ${new Date().toISOString().slice(11, 23)})`);
