// How docs/demo.png is made: the demo page in headless Chromium against the fat jar, two topics,
// five events published from its publish box; prints the console errors it saw (a CSP violation
// would show here). From the repository root (Node resolves puppeteer-core next to the script):
//   (cd clients/js && npm ci) && mkdir -p clients/js/test-output && cp docs/demo-screenshot.mjs clients/js/test-output/
//   java -jar server/target/push-server.jar --port 18931 --data-dir "$(mktemp -d)" &
//   node clients/js/test-output/demo-screenshot.mjs http://127.0.0.1:18931 docs/demo.png websocket
import puppeteer from 'puppeteer-core';
const base = process.argv[2], out = process.argv[3], transport = process.argv[4] || 'websocket';
const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'] });
const page = await browser.newPage();
await page.setViewport({ width: 1200, height: 760, deviceScaleFactor: 1 });
const problems = [];
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
page.on('response', (r) => { if (r.status() >= 400) problems.push(r.url()); });
page.on('pageerror', (e) => problems.push(String(e)));
await page.goto(`${base}/demo?topics=orders,news&transport=${transport}`, { waitUntil: 'load' });
await page.waitForFunction(() => document.querySelector('#state').dataset.state === 'open', { timeout: 10000 });
await page.waitForFunction(() => document.querySelectorAll('#cursors tr').length === 2, { timeout: 10000 });
const items = [['orders', '{"order": 4711, "status": "paid"}'], ['news', '{"headline": "push server 1.0 released"}'],
  ['orders', '{"order": 4712, "status": "shipped"}'], ['news', '{"headline": "demo page now served by the daemon"}'],
  ['orders', '{"order": 4711, "status": "delivered"}']];
for (const [topic, data] of items) {
  await page.$eval('#pub-topic', (el, v) => { el.value = v; }, topic);
  await page.$eval('#pub-data', (el, v) => { el.value = v; }, data);
  const before = await page.$$eval('#events tr', (r) => r.length);
  await page.click('#publish');
  await page.waitForFunction((n) => document.querySelectorAll('#events tr').length > n, { timeout: 10000 }, before);
}
await page.waitForFunction(() => document.querySelector('#pub-msg').textContent.startsWith('published'));
await page.screenshot({ path: out });
const rows = await page.$$eval('#events tr', (r) => r.map((x) => x.textContent));
console.log(JSON.stringify({ rows: rows.length, state: await page.$eval('#state', (e) => e.textContent), problems }));
await browser.close();
