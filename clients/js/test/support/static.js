// A small front for the browser tests: serves the test page and passes every other request
// (/v1/client.js and /demo too, so the daemon's own copies and their Content-Security-Policy are
// what the browser gets), WebSocket upgrades included, through to the real server. A raw TCP tunnel for upgrades, so that
// close frames (1012 and its hint) reach the page byte for byte, as through nginx.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = {
  '/test/page.html': ['test/browser-page.html', 'text/html; charset=utf-8'],
};

export async function startFront(upstreamPort) {
  const sockets = new Set();
  const server = createServer((req, res) => {
    const path = req.url.split('?')[0].replace(/\/$/, '') || '/';
    const file = FILES[path];
    if (file) {
      res.writeHead(200, { 'Content-Type': file[1], 'Cache-Control': 'no-store' });
      res.end(readFileSync(resolve(root, file[0])));
      return;
    }
    const up = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode, ures.headers);
      ures.pipe(res);
      // An upstream that dies mid-response (kill -9 under an SSE stream) must cut the page's
      // connection too, as nginx does; pipe() alone would leave it open and silent forever.
      ures.on('close', () => {
        if (!ures.complete) res.destroy();
      });
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'application/json' });
      res.end('{"error":"bad_gateway","message":"upstream down"}');
    });
    req.pipe(up);
  });
  server.on('upgrade', (req, socket, head) => {
    const up = connect(upstreamPort, '127.0.0.1');
    sockets.add(socket);
    sockets.add(up);
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    up.on('connect', () => {
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    const end = () => {
      socket.destroy();
      up.destroy();
      sockets.delete(socket);
      sockets.delete(up);
    };
    up.on('error', end);
    socket.on('error', end);
    // end(), not destroy(): the server's last bytes (its close frame) must still reach the page.
    up.on('close', () => socket.end());
    socket.on('close', end);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
