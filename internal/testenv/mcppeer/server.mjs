// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, exact
// version in package-lock.json) as a real peer for streamprobe's mcp
// dialect tests: Streamable HTTP with the SDK's own server transport
// (StreamableHTTPServerTransport), the InMemoryEventStore the SDK ships
// with its examples, and the SDK's low-level Server with one tool,
// `progress`, that reports progress paced by its arguments and can close
// its own SSE stream mid-call (SEP-1699, extra.closeSSEStream). Nothing of
// the protocol is written here: the bytes on the wire are the SDK's.
//
// It listens on 127.0.0.1 (port 0: any), prints {"port":N} on stdout and
// serves the MCP endpoint at /mcp. The session's transport options come
// from the initialize request's query string:
//   ?json=1      enableJsonResponse (application/json answers)
//   ?store=0     no event store (no ids, no priming event, no resume)
//   ?retry=MS    retryInterval: the priming event carries retry: MS
// GET /log answers every HTTP exchange so far (the newest 500): its start
// (ms on the process clock), method, JSON-RPC method, headers that
// matter, status, each write the server made with its time in ms since
// the request arrived, and when the response ended; and the end of each
// tool call (method TOOL). A test compares the probe's readings with the
// server's own send times.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

const tools = [
  {
    name: 'progress',
    description: 'Reports progress `steps` times, one every `interval_ms`, then, `tail_ms` later, answers with `text`; after `close_after` reports it closes its SSE stream (SEP-1699) and goes on.',
    inputSchema: {
      type: 'object',
      properties: {
        steps: { type: 'integer', minimum: 0, maximum: 10000 },
        interval_ms: { type: 'integer', minimum: 0, maximum: 60000 },
        close_after: { type: 'integer', minimum: 0 },
        tail_ms: { type: 'integer', minimum: 0, maximum: 60000 },
        text: { type: 'string' },
      },
    },
  },
];

const sleep = (ms, signal) => new Promise((resolve) => {
  if (signal.aborted) return resolve();
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

function newServer() {
  const server = new Server({ name: 'streamprobe-mcppeer-ts', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== 'progress') {
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
    }
    const a = request.params.arguments ?? {};
    const count = Number.isInteger(a.steps) ? a.steps : 5;
    const interval = Number.isInteger(a.interval_ms) ? a.interval_ms : 50;
    const closeAfter = Number.isInteger(a.close_after) ? a.close_after : 0;
    const tail = Number.isInteger(a.tail_ms) ? a.tail_ms : 0;
    const text = typeof a.text === 'string' ? a.text : 'done';
    const token = request.params._meta?.progressToken;
    for (let i = 1; i <= count; i++) {
      await sleep(interval, extra.signal);
      if (extra.signal.aborted) break;
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: count, message: `step ${i} of ${count}` },
        });
      }
      if (i === closeAfter && extra.closeSSEStream) extra.closeSSEStream();
    }
    if (tail > 0) await sleep(tail, extra.signal);
    logToolDone(extra.sessionId, text, extra.signal.aborted);
    return { content: [{ type: 'text', text: `${text}: ${count} steps` }] };
  });
  return server;
}

const sessions = new Map(); // Mcp-Session-Id -> transport
const exchanges = [];
let seq = 0;

// record wraps res.write and res.end to log each write with its time.
function record(req, res, rpc, t0) {
  const ex = {
    seq: ++seq, start: t0, method: req.method, rpc,
    session: req.headers['mcp-session-id'] ?? '',
    last_event_id: req.headers['last-event-id'] ?? '',
    status: 0, writes: [], ended: false,
  };
  exchanges.push(ex);
  if (exchanges.length > 500) exchanges.shift();
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
  return ex;
}

// logToolDone logs the end of a tool call as an exchange of method TOOL
// (rpc "done" or "cancelled", the call's text in the one write), so a
// test knows when the tool finished while no stream carried its answer.
function logToolDone(session, text, cancelled) {
  exchanges.push({ seq: ++seq, start: performance.now(), method: 'TOOL', rpc: cancelled ? 'cancelled' : 'done', session: session ?? '', last_event_id: '', status: 0, writes: [{ at: 0, data: text }], ended: true, end_at: 0 });
  if (exchanges.length > 500) exchanges.shift();
}

async function readJSON(req) {
  let body = '';
  for await (const b of req) body += b;
  return body === '' ? undefined : JSON.parse(body);
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
  let body;
  if (req.method === 'POST') {
    try {
      body = await readJSON(req);
    } catch {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
      return;
    }
  }
  const rpc = Array.isArray(body) ? body.map((m) => m.method ?? 'response').join(',') : (body?.method ?? (body ? 'response' : ''));
  record(req, res, rpc, t0);
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? sessions.get(sid) : undefined;
  if (!transport && !sid && req.method === 'POST' && isInitializeRequest(body)) {
    const store = url.searchParams.get('store') !== '0';
    const retry = url.searchParams.get('retry');
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: url.searchParams.get('json') === '1',
      eventStore: store ? new InMemoryEventStore() : undefined,
      retryInterval: retry ? Number(retry) : undefined,
      onsessioninitialized: (id) => { sessions.set(id, transport); },
      onsessionclosed: (id) => { sessions.delete(id); },
    });
    await newServer().connect(transport);
  }
  if (!transport) {
    // As the SDK's own example servers answer a request for no session.
    res.writeHead(sid ? 404 : 400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: sid ? -32001 : -32000, message: sid ? 'Session not found' : 'Bad Request: No valid session ID provided' }, id: null }));
    return;
  }
  await transport.handleRequest(req, res, body);
});

httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0)); // the test closed our stdin
process.stdin.resume();
