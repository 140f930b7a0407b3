// npm run bench:proxy — what the model proxy adds to a model request: the latency of requests
// through the proxy (its Unix socket, and the whole in-sandbox path: the Node forwarder on
// loopback, then the socket) against the same requests sent straight to a scripted provider on
// 127.0.0.1, interleaved in one run, plain and streamed; and tokens per second of a long stream
// (one token per SSE event) through it against direct. Targets: overhead p50 ≤ 2 ms, p99 ≤ 10 ms.
// Usage: npm run bench:proxy [-- --requests 400 --tokens 5000]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request, type RequestOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FORWARDER_NODE_SOURCE, startModelProxy } from '../src/proxy/index.js';
import { createDeadline } from '../src/solvers/index.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    tokens: { type: 'string', default: '5000' },
  },
});
const REQUESTS = Number(values.requests);
const TOKENS = Number(values.tokens);
const KEY = 'sk-bench-0123456789abcdef0123456789';

// The scripted provider: a fixed Chat Completions answer, plain or streamed in `chunks` events.
const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
const PLAIN = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'bench',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }],
  usage: USAGE,
});
const event = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const streamBody = (chunks: number) =>
  [
    event({ role: 'assistant', content: '' }),
    ...Array.from({ length: chunks }, () => event({ content: 'tok ' })),
    event({}, 'stop'),
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [], usage: USAGE })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
const SHORT_STREAM = streamBody(20);
const LONG_STREAM = streamBody(TOKENS);

const upstream = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { stream?: boolean; n?: number };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(PLAIN);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body.n === TOKENS ? LONG_STREAM : SHORT_STREAM);
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamPort = (upstream.address() as AddressInfo).port;

const socketDir = await mkdtemp(join(tmpdir(), 'proctor-bench-proxy-'));
const deadline = createDeadline(3_600_000);
const proxy = await startModelProxy({
  socketDir,
  upstream: { baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, apiKey: KEY },
  prices: { input: 2, cachedInput: 0.5, output: 8 },
  limits: { maxTurns: 1_000_000 },
  deadline,
});
const forwarder = spawn(process.execPath, ['-e', FORWARDER_NODE_SOURCE, '0', proxy.socketPath], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const forwarderPort = await new Promise<number>((resolve) => {
  createInterface({ input: forwarder.stdout }).once('line', (line) =>
    resolve(Number(line.split(':').pop())),
  );
});

type Route = 'direct' | 'socket' | 'forwarder';
const agents: Record<Route, Agent> = {
  direct: new Agent({ keepAlive: true, maxSockets: 1 }),
  socket: new Agent({ keepAlive: true, maxSockets: 1 }),
  forwarder: new Agent({ keepAlive: true, maxSockets: 1 }),
};
const target: Record<Route, RequestOptions> = {
  direct: { host: '127.0.0.1', port: upstreamPort, path: '/v1/chat/completions' },
  socket: { socketPath: proxy.socketPath, path: '/v1/chat/completions' },
  forwarder: { host: '127.0.0.1', port: forwarderPort, path: '/v1/chat/completions' },
};

/** One request; resolves with ms to the last byte and the SSE events received. */
function send(
  route: Route,
  body: Record<string, unknown>,
): Promise<{ ms: number; events: number }> {
  const payload = JSON.stringify({
    model: 'bench',
    messages: [{ role: 'user', content: 'hi' }],
    ...body,
  });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...target[route],
        method: 'POST',
        agent: agents[route],
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: `Bearer ${route === 'direct' ? KEY : proxy.token}`,
        },
      },
      (res) => {
        let events = 0;
        res.on('data', (chunk: Buffer) => {
          for (let i = chunk.indexOf('\n\n'); i !== -1; i = chunk.indexOf('\n\n', i + 2)) events++;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${route}: HTTP ${res.statusCode}`));
          else resolve({ ms: performance.now() - started, events });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
};
const fmt = (n: number) => n.toFixed(2).padStart(6);

try {
  for (const stream of [false, true]) {
    const times: Record<Route, number[]> = { direct: [], socket: [], forwarder: [] };
    const routes: Route[] = ['direct', 'socket', 'forwarder'];
    for (let i = 0; i < 30; i++) for (const r of routes) await send(r, { stream });
    for (let i = 0; i < REQUESTS; i++) {
      for (const r of routes) times[r].push((await send(r, { stream })).ms);
    }
    const label = stream ? 'streamed (20 events)' : 'plain';
    console.log(`${label}, ${REQUESTS} interleaved requests per route, ms to the last byte:`);
    const [d50, d99] = [pct(times.direct, 50), pct(times.direct, 99)];
    console.log(`  direct                p50 ${fmt(d50)}   p99 ${fmt(d99)}`);
    for (const r of ['socket', 'forwarder'] as const) {
      const [p50, p99] = [pct(times[r], 50), pct(times[r], 99)];
      console.log(
        `  via proxy (${r.padEnd(9)}) p50 ${fmt(p50)}   p99 ${fmt(p99)}   overhead p50 ${fmt(p50 - d50)}  p99 ${fmt(p99 - d99)}   ratio ${(p50 / d50).toFixed(2)}×`,
      );
    }
  }
  const rates: Record<Route, number[]> = { direct: [], socket: [], forwarder: [] };
  for (let i = 0; i < 5; i++) {
    for (const r of ['direct', 'socket', 'forwarder'] as const) {
      const { ms, events } = await send(r, { stream: true, n: TOKENS });
      if (events < TOKENS) throw new Error(`${r}: ${events} events, expected ${TOKENS}+`);
      rates[r].push(TOKENS / (ms / 1000));
    }
  }
  const direct = pct(rates.direct, 50);
  console.log(`a ${TOKENS}-token stream (one token per event), median of 5, tokens/s:`);
  console.log(`  direct                ${direct.toFixed(0)}`);
  for (const r of ['socket', 'forwarder'] as const) {
    const rate = pct(rates[r], 50);
    console.log(
      `  via proxy (${r.padEnd(9)}) ${rate.toFixed(0)}   ratio ${(rate / direct).toFixed(2)}×`,
    );
  }
  const totals = proxy.trajectory().totals;
  console.log(
    `proxy counted ${totals.turns} turns, ${(totals.usage?.outputTokens ?? 0).toString()} output tokens`,
  );
} finally {
  forwarder.kill();
  await proxy.close();
  deadline.dispose();
  for (const agent of Object.values(agents)) agent.destroy();
  upstream.close();
  await rm(socketDir, { recursive: true, force: true });
}
