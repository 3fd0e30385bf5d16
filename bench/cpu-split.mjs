// Where a fan-out run's CPU went, for bench/compare.sh (SPLIT=1): waits for the server processes
// whose command lines match PATTERN (all of them: Nchan's `worker_processes auto` makes one nginx
// worker per core), samples them every 0.5 s until they exit, and prints, for the
// WINDOW seconds that end TAIL seconds (default 1.5: the driver's report and the stop) before it
// exited:
//  - the server's CPU by thread kind (event loops, JIT compiler threads, the writer, GC, ...),
//    from /proc/PID/task/*/stat, in ms;
//  - each core's busy time from /proc/stat, in ms, with its softirq share. On loopback the
//    kernel's TCP work is billed to whichever task is running when it happens: a segment that
//    Nagle's algorithm held is sent when the peer's ACK arrives, in the ACKing task's softirq,
//    so part of a batching server's send path lands on the driver's core, not in its own CPU.
//    Core figures count whatever else runs on the core: meaningful on a quiet machine only.
// WINDOW may be shorter than the run: the last 30 s of a 120 s run show the JVM once the JIT has
// compiled the publish path (at 100 publishes/s its C2 thresholds take a minute or two to reach).
// Usage: node bench/cpu-split.mjs PATTERN WINDOW-SECONDS
import fs from 'node:fs';

const [pattern, windowArg] = process.argv.slice(2);
const re = new RegExp(pattern);
const win = Number(windowArg || 10), tail = Number(process.env.TAIL || 1.5);
const sleep = ms => new Promise(r => setTimeout(r, ms));
const read = p => { try { return fs.readFileSync(p, 'utf8'); } catch { return null; } };

const find = () => {
  const found = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const c = read(`/proc/${d}/cmdline`);
    if (c && re.test(c.replaceAll('\0', ' ').trim())) found.push(d);
  }
  return found;
};
const kind = name => name.replace(/[-#\d]+$/, '').trim() || name; // one row per pool: loops, GC threads, ...
const threads = pids => { // every thread of every process, by thread id (unique system-wide)
  const out = new Map();
  for (const pid of pids) {
    let tids = [];
    try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const t of tids) {
      const name = read(`/proc/${pid}/task/${t}/comm`), stat = read(`/proc/${pid}/task/${t}/stat`);
      if (!name || !stat) continue;
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out.set(t, { name: kind(name.trim()), ticks: Number(f[11]) + Number(f[12]) });
    }
  }
  return out;
};
const cores = () => {
  const out = {};
  for (const l of (read('/proc/stat') || '').split('\n')) {
    const m = /^(cpu\d+) (.*)$/.exec(l);
    if (!m) continue;
    const f = m[2].trim().split(/\s+/).map(Number);
    out[m[1]] = { busy: f.reduce((a, b) => a + b, 0) - f[3] - f[4], softirq: f[5] + f[6] };
  }
  return out;
};

let pids = [];
for (let i = 0; i < 1200 && !pids.length; i++) { pids = find(); if (!pids.length) await sleep(100); }
if (!pids.length) { console.error(`cpu-split: no process matches ${pattern}`); process.exit(1); }
await sleep(500); pids = find(); // a server's processes come up together (nginx's workers)
const snaps = [];
while (pids.some(p => fs.existsSync(`/proc/${p}`))) {
  const t = threads(pids);
  if (t.size) snaps.push({ at: Date.now() / 1000, threads: t, cores: cores() });
  await sleep(500);
}
if (snaps.length < 3) { console.error('cpu-split: the server lived too briefly'); process.exit(1); }
const last = snaps[snaps.length - 1].at;
const end = [...snaps].reverse().find(s => s.at <= last - tail) || snaps[snaps.length - 1];
const start = snaps.find(s => s.at >= end.at - win) || snaps[0];
const ms = ticks => ticks * 10; // USER_HZ = 100
const byKind = new Map();
for (const [tid, t] of end.threads) {
  const before = start.threads.get(tid)?.ticks ?? 0;
  byKind.set(t.name, (byKind.get(t.name) || 0) + ms(t.ticks - before));
}
const parts = [...byKind].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`);
const coreParts = Object.keys(end.cores).map(c =>
  `${c} busy ${ms(end.cores[c].busy - (start.cores[c]?.busy ?? 0))} (softirq ${ms(end.cores[c].softirq - (start.cores[c]?.softirq ?? 0))})`);
const of = pids.length > 1 ? ` (${pids.length} processes)` : '';
console.log(`cpu-split over ${(end.at - start.at).toFixed(1)} s${of}, ms: ${parts.join(', ')}; ${coreParts.join(', ')}`);
