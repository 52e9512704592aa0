// The LangGraph JS API server (@langchain/langgraph-api, exact version in
// package-lock.json) as a real peer for streamprobe's langgraph dialect:
// startServer, the function `langgraph-cli dev` runs, with its in-memory
// storage in a temporary folder and one graph, graph.mjs's `agent`.
// Nothing of the API is written here: the bytes on the wire are the
// server's.
//
// It listens on 127.0.0.1 (port 0: any), prints {"port":N} on stdout and
// exits when its stdin ends. GET /_log answers every HTTP exchange so far
// (the newest 500): method, path, Last-Event-ID, status, each write with
// its time in ms since the request arrived, and when the response ended:
// taken by wrapping node:http's request listener before the server is
// loaded, so a test compares the probe's readings with the server's own
// send times.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { syncBuiltinESMExports } from 'node:module';
import { performance } from 'node:perf_hooks';

// The server logs to stdout: its lines go to stderr, so that the first
// line of stdout is the port.
const stdout = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

const log = [];
const origCreateServer = http.createServer;
http.createServer = function createServer(...args) {
  const i = args.findIndex((a) => typeof a === 'function');
  const listener = args[i];
  args[i] = (req, res) => {
    if (req.url === '/_log') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(log));
      return;
    }
    const t0 = performance.now();
    const e = { start: t0, method: req.method, path: req.url, last_event_id: req.headers['last-event-id'] ?? '', status: 0, writes: [], end_at: 0 };
    log.push(e);
    if (log.length > 500) log.shift();
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    const note = (chunk) => {
      if (chunk != null && chunk.length) e.writes.push({ at: performance.now() - t0, data: Buffer.from(chunk).toString() });
    };
    res.write = (chunk, ...rest) => { e.status = res.statusCode; const ok = write(chunk, ...rest); note(chunk); return ok; };
    res.end = (chunk, ...rest) => { e.status = res.statusCode; if (typeof chunk !== 'function') note(chunk); e.end_at = performance.now() - t0; return end(chunk, ...rest); };
    res.on('close', () => { if (!e.end_at) e.end_at = performance.now() - t0; e.status = res.statusCode; });
    listener(req, res);
  };
  return origCreateServer.apply(this, args);
};
syncBuiltinESMExports();

const here = path.dirname(fileURLToPath(import.meta.url));
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'streamprobe-langgraphpeer-'));
process.on('exit', () => fs.rmSync(cwd, { recursive: true, force: true }));
const { startServer } = await import('@langchain/langgraph-api/server');
const { host } = await startServer({
  port: 0, nWorkers: 4, host: '127.0.0.1', cwd,
  graphs: { agent: path.join(here, 'graph.mjs') + ':graph' },
});
stdout(JSON.stringify({ port: Number(host.split(':').at(-1)) }) + '\n');
process.stdin.on('end', () => process.exit(0)); // the test closed our stdin
process.stdin.resume();
