/**
 * The `eventing` scenario's receivers, in a process of their own (so the bench process's CPU time is
 * the sender's alone): one node:http server on loopback answering 204 to every POST, counting hits
 * and, while asked to, the event-to-receipt latency (receipt time minus the envelope's `time`).
 * Driven over IPC: `{cmd:'reset', latency}` → `{ok}`, `{cmd:'hits'}` → `{hits}`, `{cmd:'stats'}` → `{hits, latencies}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let hits = 0;
let recordLatency = false;
let latencies: number[] = [];

const server = http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => (body += c));
  req.on('end', () => {
    hits++;
    if (recordLatency) {
      const m = /"time":"([^"]+)"/.exec(body);
      if (m) latencies.push(Date.now() - Date.parse(m[1] as string));
    }
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));

process.on('message', (m: { cmd: string; latency?: boolean }) => {
  if (m.cmd === 'reset') {
    hits = 0;
    latencies = [];
    recordLatency = m.latency === true;
    process.send?.({ ok: true });
  } else if (m.cmd === 'hits') {
    process.send?.({ hits });
  } else if (m.cmd === 'stats') {
    process.send?.({ hits, latencies });
  }
});
process.on('disconnect', () => process.exit(0));
