// The metering model proxy: one per solve, on the host, listening on a Unix socket whose folder
// is mounted into the sandbox (an in-sandbox forwarder, forwarder.ts, gives the agent
// `http://127.0.0.1:PORT`). It is the agent's only route to a model, and it keeps on the host
// what must not be in the sandbox: the provider's key and network.
//
// For each request: the run-scoped token is checked (constant time; a refusal says nothing
// about the key); the path picks the protocol; the body is read (bounded) and parsed; the
// deadline and the budget admit it or it is refused in its protocol's error shape; the model
// may be replaced by the configured one (in the body, or in a Gemini path) and, for a Chat
// Completions stream, usage is asked for; the exchange is forwarded (exchange.ts), its usage charged at the price table, and a
// redacted step recorded. The first limit passed, or the deadline, is the solve's stop
// (BUDGET_EXCEEDED or TIMEOUT), reported once through `onStop`.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, rm } from 'node:fs/promises';
import {
  Agent as HttpAgent,
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../logger.js';
import { createBudget } from './budget.js';
import { forward, type ExchangeResult } from './exchange.js';
import { requestMessages } from './messages.js';
import {
  WIRE_PROTOCOLS,
  errorResponse,
  isModelList,
  presentedToken,
  protocolOf,
  routeOf,
  upstreamPath,
  type ProxyErrorKind,
} from './protocols.js';
import {
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_UPSTREAM_IDLE_MS,
  MAX_SOCKET_PATH,
  SOCKET_NAME,
  checkOptions,
  invalid,
  type ModelProxyOptions,
} from './options.js';
import { createRecorder, type StepDraft } from './recorder.js';
import type { ProxyStop, Trajectory } from './trajectory.js';

export interface ModelProxy {
  /** The socket's host path. */
  readonly socketPath: string;
  /**
   * What the agent presents as its API key (Bearer, x-api-key, x-goog-api-key or `?key=`).
   * Not a provider key.
   */
  readonly token: string;
  /** The solve's stop, once a limit or the deadline has been passed. */
  stop(): ProxyStop | null;
  /** Every exchange so far, redacted, with the totals. */
  trajectory(): Trajectory;
  /** Stops listening, cuts requests in flight, removes the socket. Idempotent. */
  close(): Promise<void>;
}

/** What a refused body may still send, discarded, before its connection goes. */
const DRAIN_BYTES = 256 * 1024 * 1024;
const DRAIN_MS = 10_000;

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Reads a request body up to `limit` bytes; null when it is larger. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Over the limit: stop collecting and leave the rest of the body to the caller.
        req.off('data', onData);
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    // Resolved already when the body was whole; otherwise the agent went away mid-body.
    req.on('close', () => reject(new Error('the agent went away before its request was whole')));
  });
}

/**
 * Discards the rest of a refused request's body, so that the agent's client, still writing,
 * reads the refusal instead of a connection reset (an HTTP client that is mid-body when the
 * peer closes sees only the reset). Nothing is kept; past DRAIN_BYTES or DRAIN_MS the
 * connection goes. A body already whole needs nothing.
 */
function drainRefused(req: IncomingMessage): void {
  if (req.complete) return;
  let drained = 0;
  const cap = setTimeout(() => req.destroy(), DRAIN_MS);
  const done = () => clearTimeout(cap);
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) req.destroy();
  });
  req.on('end', done);
  req.on('close', done);
  req.resume();
}

export async function startModelProxy(options: ModelProxyOptions): Promise<ModelProxy> {
  checkOptions(options);
  const socketPath = join(options.socketDir, SOCKET_NAME);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw invalid(`socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes`);
  }
  const logger = options.logger ?? silentLogger;
  const token = options.token ?? randomBytes(32).toString('hex');
  const tokenDigest = digest(token);
  const protocols = new Set(options.protocols ?? WIRE_PROTOCOLS);
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const idleMs = options.upstreamIdleMs ?? DEFAULT_UPSTREAM_IDLE_MS;
  const secrets = [options.upstream.apiKey, token];
  const { deadline } = options;
  const started = performance.now();
  const now = () => performance.now() - started;
  const recorder = createRecorder(secrets);
  const budget = createBudget(
    options.limits ?? {},
    options.prices ?? null,
    (stop) => {
      logger.warn('model proxy: the solve is stopped', {
        reason: stop.reason,
        detail: stop.detail,
      });
      options.onStop?.(stop);
    },
    options.sharedCost,
  );
  const closing = new AbortController();
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
  };

  const timeoutStop: ProxyStop = {
    reason: 'TIMEOUT',
    limit: 'deadline',
    detail: 'the solver deadline was reached',
  };
  const onDeadline = () => {
    if (deadline.expired()) budget.stopWith(timeoutStop);
  };
  deadline.signal.addEventListener('abort', onDeadline, { once: true });
  onDeadline(); // a deadline already spent aborted its signal before anyone listened

  const authorized = (req: IncomingMessage): boolean => {
    const presented = presentedToken(req.headers, req.url);
    return presented !== undefined && timingSafeEqual(digest(presented), tokenDigest);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startMs = now();
    const route = routeOf(req.url);
    const protocol = route?.protocol ?? null;
    const draft: StepDraft = {
      protocol,
      startMs,
      firstByteMs: null,
      durationMs: 0,
      requestedModel: null,
      model: null,
      stream: false,
      input: [],
      tools: [],
      output: [],
      finishReason: null,
      usage: null,
      costUsd: null,
      status: 0,
      outcome: 'refused',
      error: null,
    };
    const refuse = (kind: ProxyErrorKind, message: string) => {
      const answer = errorResponse(protocol, kind, message);
      // The connection stays: closing it while the body is still arriving would reset it, and
      // the client would see the reset, not this answer (a 413 or a 401 under load did).
      drainRefused(req);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      const index = recorder.nextIndex();
      recorder.record(index, {
        ...draft,
        status: answer.status,
        error: message,
        durationMs: now() - startMs,
      });
      logger.info('model proxy: refused', { step: index, status: answer.status, kind });
    };

    // The token first: an unauthenticated caller learns nothing, not even which paths exist.
    if (!authorized(req)) {
      refuse('unauthorized', 'the request did not present this run’s token');
      return;
    }
    if (req.method === 'GET' && isModelList(req.url)) {
      req.resume();
      const id = options.upstream.model ?? 'proctor';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id, object: 'model', created: 0, owned_by: 'proctor' }],
        }),
      );
      return;
    }
    if (route === null || protocol === null || !protocols.has(protocol)) {
      refuse('not_found', `no model endpoint at ${(req.url ?? '').split('?')[0]?.slice(0, 100)}`);
      return;
    }
    if (req.method !== 'POST') {
      refuse('method_not_allowed', `${req.method ?? '?'} is not allowed; model requests are POST`);
      return;
    }
    const raw = await readBody(req, maxRequestBytes);
    if (raw === null) {
      refuse('too_large', `the request body is larger than ${maxRequestBytes} bytes`);
      return;
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error('not an object');
      }
      body = parsed as Record<string, unknown>;
    } catch {
      refuse('bad_request', 'the request body must be a JSON object');
      return;
    }
    // Gemini names the model and streaming in the path; the others in the body.
    const { gemini } = route;
    if (gemini?.stream === true && !gemini.sse) {
      refuse('bad_request', 'streamGenerateContent is served with ?alt=sse only');
      return;
    }
    if (!gemini && body['stream'] !== undefined && typeof body['stream'] !== 'boolean') {
      refuse('bad_request', '`stream` must be true or false');
      return;
    }
    const stream = gemini ? gemini.stream : body['stream'] === true;
    draft.stream = stream;
    const requested = gemini ? gemini.model : body['model'];
    draft.requestedModel = typeof requested === 'string' ? requested.slice(0, 200) : null;
    const { messages, tools } = requestMessages(protocol, body);
    draft.input = messages;
    draft.tools = tools;

    if (deadline.expired()) budget.stopWith(timeoutStop);
    const stop = await budget.admit();
    if (stop) {
      refuse(stop.reason === 'TIMEOUT' ? 'deadline_exceeded' : 'budget_exceeded', stop.detail);
      return;
    }

    let model: string | null;
    if (gemini) {
      model = options.upstream.model ?? gemini.model;
    } else {
      if (options.upstream.model !== undefined) body['model'] = options.upstream.model;
      model = typeof body['model'] === 'string' ? body['model'] : null;
    }
    draft.model = model;
    if (stream && protocol === 'openai-chat') {
      const existing = body['stream_options'];
      body['stream_options'] = {
        ...(typeof existing === 'object' && existing !== null ? existing : {}),
        include_usage: true,
      };
    }

    const index = recorder.nextIndex();
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const signal = AbortSignal.any([deadline.signal, closing.signal, gone.signal]);
    // Tokens are spent once a 2xx answer began, whether or not its usage arrived. With a cap
    // shared by other solves, the answer's cost is drawn before its last bytes reach the
    // agent: a request the agent's next turn makes to any proxy of the batch then sees it.
    let charged: Promise<{ costUsd: number | null }> | undefined;
    const charge = (done: ExchangeResult) => (charged ??= budget.charge(done.usage, done.whole));
    const result: ExchangeResult = await forward({
      protocol,
      path: upstreamPath(protocol, model ?? '', stream),
      body: Buffer.from(JSON.stringify(body)),
      stream,
      headers: req.headers,
      res,
      upstream: options.upstream,
      secrets,
      signal,
      abortKind: () => {
        if (closing.signal.aborted) {
          return { kind: 'closed', outcome: 'upstream_failed', message: 'the model proxy closed' };
        }
        if (gone.signal.aborted) {
          return { kind: 'closed', outcome: 'aborted', message: 'the agent went away' };
        }
        if (!deadline.expired()) {
          // The deadline was disposed: the solve ended some other way.
          return { kind: 'closed', outcome: 'upstream_failed', message: 'the solve ended' };
        }
        budget.stopWith(timeoutStop);
        return {
          kind: 'deadline_exceeded',
          outcome: 'timeout',
          message: 'the solver deadline was reached while the request was in flight',
        };
      },
      idleMs,
      agents,
      now,
      ...(options.sharedCost ? { beforeEnd: charge } : {}),
    });

    let cost: number | null = null;
    if (result.began) {
      cost = (await charge(result)).costUsd;
      options.meter?.answer(result.usage);
    }
    recorder.record(index, {
      ...draft,
      firstByteMs: result.firstByteAt === null ? null : result.firstByteAt - startMs,
      durationMs: now() - startMs,
      output: result.output,
      finishReason: result.finishReason,
      usage: result.usage,
      costUsd: cost,
      status: result.status,
      outcome: result.outcome,
      error: result.error,
    });
    logger.info('model proxy: exchange', {
      step: index,
      protocol,
      status: result.status,
      outcome: result.outcome,
      ms: Math.round(now() - startMs),
      tokens: result.usage ? result.usage.inputTokens + result.usage.outputTokens : null,
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error('model proxy: request failed', {
        error: error instanceof Error ? error.message : String(error),
      });
      if (!res.headersSent) {
        const answer = errorResponse(
          protocolOf(req.url),
          'bad_request',
          'the request could not be read',
        );
        res.writeHead(answer.status, answer.headers).end(answer.body);
      } else res.destroy();
    });
  });
  // Streams may be quiet for long stretches (a model thinking); the idle limit above governs.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 60_000;

  await mkdir(options.socketDir, { recursive: true });
  await chmod(options.socketDir, 0o711);
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o666);

  let closed: Promise<void> | undefined;
  return {
    socketPath,
    token,
    stop: () => budget.stop(),
    trajectory: () => recorder.trajectory(budget.totals(), budget.stop()),
    close() {
      closed ??= (async () => {
        deadline.signal.removeEventListener('abort', onDeadline);
        closing.abort();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        agents.http.destroy();
        agents.https.destroy();
        await rm(socketPath, { force: true });
      })();
      return closed;
    },
  };
}
