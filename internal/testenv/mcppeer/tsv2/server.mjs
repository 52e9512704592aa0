// The official MCP TypeScript SDK v2 (@modelcontextprotocol/server and its
// Node adapter @modelcontextprotocol/node, exact versions in
// package-lock.json) as a real 2026-07-28 peer for streamprobe's mcp
// dialect tests: the SDK's serving entry createMcpHandler (stateless: a
// server instance per request, server/discover, the per-request _meta
// envelope and the standard headers checked by the SDK; 2025-era traffic
// served by the SDK's stateless legacy fallback), mounted on node:http with
// toNodeHandler, and the same tool as the 2025 peer (../server.mjs),
// `progress`. Nothing of the protocol is written here: the bytes on the
// wire are the SDK's.
//
// It listens on 127.0.0.1 (port 0: any), prints {"port":N} on stdout,
// serves the MCP endpoint at /mcp and exits when its stdin ends. The query
// string chooses the handler's options:
//   ?json=1      responseMode 'json' (one application/json answer; the
//                SDK drops the call's progress)
//   ?strict=1    legacy 'reject' (2026-07-28 only; 2025-era traffic refused)
// GET /log answers every HTTP exchange so far (the newest 500) as
// ../server.mjs does, and the end of each tool call (method TOOL, rpc
// "done" or "cancelled").
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const inputSchema = {
  type: 'object',
  properties: {
    steps: { type: 'integer', minimum: 0, maximum: 10000 },
    interval_ms: { type: 'integer', minimum: 0, maximum: 60000 },
    close_after: { type: 'integer', minimum: 0 },
    retry_ms: { type: 'integer', minimum: 0 },
    text: { type: 'string' },
  },
};

const sleep = (ms, signal) => new Promise((resolve) => {
  if (signal.aborted) return resolve();
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

// progress: `steps` progress notifications (default 5) for the call's
// progressToken, one every `interval_ms` (default 50), then the answer
// "<text>: <steps> steps". A stateless server has no SSE stream of its own
// to close, so close_after and retry_ms are accepted and do nothing here.
async function progress(a, ctx) {
  const count = Number.isInteger(a.steps) ? a.steps : 5;
  const interval = Number.isInteger(a.interval_ms) ? a.interval_ms : 50;
  const text = typeof a.text === 'string' ? a.text : 'done';
  const signal = ctx.mcpReq.signal;
  const token = ctx.mcpReq._meta?.progressToken;
  for (let i = 1; i <= count; i++) {
    await sleep(interval, signal);
    if (signal.aborted) break;
    if (token !== undefined) {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: i, total: count, message: `step ${i} of ${count}` },
      });
    }
  }
  logToolDone(text, signal.aborted);
  return { content: [{ type: 'text', text: `${text}: ${count} steps` }] };
}

function newServer() {
  const server = new McpServer({ name: 'streamprobe-mcppeer-ts2', version: '1.0.0' });
  server.registerTool('progress', {
    description: 'Reports progress `steps` times, one every `interval_ms`, then answers with `text`.',
    inputSchema: fromJsonSchema(inputSchema),
  }, progress);
  return server;
}

const exchanges = [];
let seq = 0;

function push(ex) {
  exchanges.push(ex);
  if (exchanges.length > 500) exchanges.shift();
}

// record wraps res.write and res.end to log each write with its time, and
// the request headers a 2026-07-28 request carries.
function record(req, res, rpc, t0) {
  const ex = {
    seq: ++seq, start: t0, method: req.method, rpc,
    session: req.headers['mcp-session-id'] ?? '',
    last_event_id: req.headers['last-event-id'] ?? '',
    protocol_version: req.headers['mcp-protocol-version'] ?? '',
    mcp_method: req.headers['mcp-method'] ?? '',
    mcp_name: req.headers['mcp-name'] ?? '',
    status: 0, writes: [], ended: false,
  };
  push(ex);
  const dec = new TextDecoder();
  const log = (chunk) => {
    if (chunk === undefined || chunk === null || chunk.length === 0) return;
    const data = typeof chunk === 'string' ? chunk : dec.decode(chunk);
    ex.writes.push({ at: performance.now() - t0, data });
  };
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = (chunk, ...rest) => { log(chunk); return write(chunk, ...rest); };
  res.end = (chunk, ...rest) => {
    if (typeof chunk !== 'function') log(chunk);
    ex.ended = true;
    return end(chunk, ...rest);
  };
  res.on('close', () => { ex.status = res.statusCode; ex.end_at = performance.now() - t0; });
}

function logToolDone(text, cancelled) {
  push({ seq: ++seq, start: performance.now(), method: 'TOOL', rpc: cancelled ? 'cancelled' : 'done', session: '', last_event_id: '', status: 0, writes: [{ at: 0, data: text }], ended: true, end_at: 0 });
}

async function readBody(req) {
  const chunks = [];
  for await (const b of req) chunks.push(b);
  return Buffer.concat(chunks);
}

const handlers = new Map(); // query options -> node handler
function handlerFor(url) {
  const json = url.searchParams.get('json') === '1';
  const strict = url.searchParams.get('strict') === '1';
  const key = `${json}/${strict}`;
  if (!handlers.has(key)) {
    const mcp = createMcpHandler(newServer, {
      ...(json && { responseMode: 'json' }),
      ...(strict && { legacy: 'reject' }),
      onerror: (e) => process.stderr.write(`mcp: ${e.message}\n`),
    });
    handlers.set(key, toNodeHandler(mcp));
  }
  return handlers.get(key);
}

const httpServer = http.createServer(async (req, res) => {
  const t0 = performance.now();
  const url = new URL(req.url, 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/log') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(exchanges));
    return;
  }
  if (url.pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  // The body is read here to log its JSON-RPC method; the SDK gets the
  // same bytes back in a request of the shape its adapter takes
  // (NodeIncomingMessageLike: method, url, headers and the body's chunks),
  // not re-serialized as a parsedBody would be.
  const raw = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
  let body;
  try {
    body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
  } catch {
    body = undefined;
  }
  const rpc = Array.isArray(body) ? body.map((m) => m.method ?? 'response').join(',') : (body?.method ?? (body ? 'response' : ''));
  record(req, res, rpc, t0);
  const replay = Object.assign(Readable.from(raw.length ? [raw] : []), { method: req.method, url: req.url, headers: req.headers });
  await handlerFor(url)(replay, res);
});

httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0)); // the test closed our stdin
process.stdin.resume();
