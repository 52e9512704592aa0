// An AI SDK chat route with resumable streams, as a real peer for
// streamprobe's ai-sdk-ui dialect: the AI SDK's "chatbot resume streams"
// pattern (npm ai, exact version in package-lock.json), the one Vercel's
// chatbot template follows. POST /api/chat answers
// streamText(...).toUIMessageStreamResponse() over the SDK's mock model
// (paced by simulateReadableStream) and, in consumeSseStream, makes the
// answer a resumable stream (resumable-stream over Redis) and saves its id
// as the chat's active stream; onFinish clears it. GET
// /api/chat/{id}/stream answers 204 when the chat has no active stream,
// else resumeExistingStream's stream. Nothing of the protocol is written
// here: the bytes are the SDK's and resumable-stream's.
//
// The chats (the template's database) live in the Redis at CHAT_REDIS_URL,
// the resumable streams in the one at REDIS_URL (resumable-stream's own
// setting): two instances of this route on the same two share them, as a
// deployment's do. It listens on 127.0.0.1 (port 0: any), prints
// {"port":N} on stdout and exits when its stdin ends. GET /log answers
// every request so far: method, path, status, each write with its time in
// ms since the request arrived, and for a POST when the active stream id
// was saved (saved_at, with the id: stream_id) and cleared (cleared_at),
// for a GET what readChat found (active).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { streamText, simulateReadableStream, generateId, UI_MESSAGE_STREAM_HEADERS } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createResumableStreamContext } from 'resumable-stream';
import { createClient } from 'redis';

// The schedule, known to the Go test: the first part after
// INITIAL_DELAY_MS, then one every CHUNK_DELAY_MS; the long sample's
// prompt (it mentions TCP) gets LONG_DELTAS text deltas, any other
// SHORT_DELTAS.
export const INITIAL_DELAY_MS = 150;
export const CHUNK_DELAY_MS = 40;
const LONG_DELTAS = 30;
const SHORT_DELTAS = 6;

const usage = { inputTokens: { total: 14, noCache: 14, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 6, text: 6, reasoning: 0 } };
function parts(n) {
  const out = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't1' }];
  for (let i = 0; i < n; i++) out.push({ type: 'text-delta', id: 't1', delta: ` w${i}` });
  out.push({ type: 'text-end', id: 't1' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
  return out;
}

const db = createClient({ url: process.env.CHAT_REDIS_URL });
await db.connect();
// The template's chat store: an unknown chat throws (the route's 500).
const readChat = async (id) => {
  const v = await db.get(`chat:${id}`);
  if (v == null) throw new Error('chat not found');
  return JSON.parse(v);
};
const saveChat = async (id, chat) => db.set(`chat:${id}`, JSON.stringify(chat));
const streamContext = createResumableStreamContext({ waitUntil: null });

const log = [];
const now = (t0) => performance.now() - t0;

async function send(res, answer, t0, e) {
  const headers = {};
  answer.headers.forEach((v, k) => { headers[k] = v; });
  res.writeHead(answer.status, headers);
  res.flushHeaders();
  e.status = answer.status;
  if (!answer.body) { res.end(); e.end_at = now(t0); return; }
  const reader = answer.body.getReader();
  const dec = new TextDecoder();
  res.on('close', () => { reader.cancel().catch(() => {}); });
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true }));
    if (done || res.destroyed) break;
    await new Promise((resolve) => res.write(value, resolve));
    e.writes.push({ at: now(t0), data: typeof value === 'string' ? value : dec.decode(value) });
  }
  res.end();
  e.end_at = now(t0);
}

async function post(req, res, t0, e) {
  let body = '';
  for await (const b of req) body += b;
  const { id, messages } = JSON.parse(body);
  e.chat = id;
  const prompt = messages.at(-1).parts.map((p) => p.text ?? '').join('');
  await saveChat(id, { activeStreamId: null });
  const model = new MockLanguageModelV4({
    doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(prompt.includes('TCP') ? LONG_DELTAS : SHORT_DELTAS), initialDelayInMs: INITIAL_DELAY_MS, chunkDelayInMs: CHUNK_DELAY_MS }) }),
  });
  const result = streamText({ model, prompt, onError: () => {} });
  const answer = result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: generateId,
    onFinish: async () => { await saveChat(id, { activeStreamId: null }); e.cleared_at = now(t0); },
    async consumeSseStream({ stream }) {
      const streamId = generateId();
      await streamContext.createNewResumableStream(streamId, () => stream);
      await saveChat(id, { activeStreamId: streamId });
      e.saved_at = now(t0);
      e.stream_id = streamId;
    },
  });
  await send(res, answer, t0, e);
}

async function resume(res, chatId, t0, e) {
  e.chat = chatId;
  const chat = await readChat(chatId);
  e.active = chat.activeStreamId != null;
  if (chat.activeStreamId == null) {
    e.status = 204;
    res.writeHead(204);
    res.end();
    e.end_at = now(t0);
    return;
  }
  const stream = await streamContext.resumeExistingStream(chat.activeStreamId);
  await send(res, new Response(stream, { headers: UI_MESSAGE_STREAM_HEADERS }), t0, e);
}

const server = http.createServer(async (req, res) => {
  const t0 = performance.now();
  if (req.method === 'GET' && req.url === '/log') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(log));
    return;
  }
  const e = { start: t0, method: req.method, path: req.url, status: 0, writes: [], end_at: 0 };
  log.push(e);
  if (log.length > 500) log.shift();
  try {
    const m = req.url.match(/^\/api\/chat\/([^/]+)\/stream$/);
    if (req.method === 'GET' && m) {
      await resume(res, decodeURIComponent(m[1]), t0, e);
    } else if (req.method === 'POST' && req.url === '/api/chat') {
      await post(req, res, t0, e);
    } else {
      e.status = 404;
      res.writeHead(404);
      res.end();
    }
  } catch (err) {
    // As a Next.js route: an exception is a 500.
    e.status = 500;
    e.error = String(err);
    e.end_at = now(t0);
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end('Internal Server Error');
  }
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0)); // the test closed our stdin
process.stdin.resume();
