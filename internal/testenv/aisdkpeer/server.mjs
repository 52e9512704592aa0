// The AI SDK as a real peer for streamprobe's ai-sdk-ui and text dialect
// tests: a chat route (POST /api/chat) that answers with
// streamText(...).toUIMessageStreamResponse(), and a text route (POST
// /api/text) that answers with streamText(...).toTextStreamResponse() (the
// AI SDK's text stream protocol: text/plain, the text deltas bare), over
// the SDK's own mock language model, whose stream simulateReadableStream paces: the bytes
// are the SDK's. It listens on 127.0.0.1 (port 0: any), prints
// {"port":N} on stdout, and logs every write of the last answer (ms since
// the request arrived, and the bytes) for GET /log, so a test compares
// the probe's readings with the server's own send times.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { streamText, simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

// The schedule, known to the Go test: the first part after
// INITIAL_DELAY_MS, then one every CHUNK_DELAY_MS.
export const INITIAL_DELAY_MS = 150;
export const CHUNK_DELAY_MS = 40;

const usage = {
  inputTokens: { total: 14, noCache: 14, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 6, text: 4, reasoning: 2 },
};

function parts(prompt) {
  if (prompt.includes('error')) {
    return [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Par' },
      { type: 'error', error: new Error('the model is overloaded') },
    ];
  }
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r1' },
    { type: 'reasoning-delta', id: 'r1', delta: 'The capital' },
    { type: 'reasoning-end', id: 'r1' },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'Paris' },
    { type: 'text-delta', id: 't1', delta: ' is' },
    { type: 'text-delta', id: 't1', delta: ' the' },
    { type: 'text-delta', id: 't1', delta: ' capital.' },
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

let lastLog = [];

const server = http.createServer(async (req, res) => {
  const t0 = performance.now();
  if (req.method === 'GET' && req.url === '/log') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(lastLog));
    return;
  }
  let body = '';
  for await (const b of req) body += b;
  let prompt = '';
  try {
    const msg = JSON.parse(body).messages.at(-1);
    prompt = msg.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  } catch {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end('{"error":"bad request"}');
    return;
  }
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: parts(prompt), initialDelayInMs: INITIAL_DELAY_MS, chunkDelayInMs: CHUNK_DELAY_MS }),
    }),
  });
  // onError: the SDK logs a stream error to the console by default.
  const result = streamText({ model, prompt, onError: () => {} });
  const answer = req.url === '/api/text' ? result.toTextStreamResponse() : result.toUIMessageStreamResponse({ sendReasoning: true });
  const headers = {};
  answer.headers.forEach((v, k) => { headers[k] = v; });
  res.writeHead(answer.status, headers);
  res.flushHeaders();
  const log = [];
  const reader = answer.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    await new Promise((resolve) => res.write(value, resolve));
    log.push({ at: performance.now() - t0, data: dec.decode(value) });
  }
  res.end();
  lastLog = log;
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0)); // the test closed our stdin
process.stdin.resume();
