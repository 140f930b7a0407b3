// One forwarded exchange: the agent's request, rewritten, goes to the provider with the real
// key; the answer comes back chunk by chunk, each chunk written to the agent as soon as it is
// masked (scrub.ts), and read on the side for the trajectory and the usage. Only chosen
// headers cross in either direction (protocols.ts).
//
// Failures become answers the agent's SDK understands: before any byte of the answer, an
// error response in the protocol's shape (502 unreachable, 504 silent); after, an error event
// closing a stream, or a cut connection for a plain answer (a half JSON body must not look
// whole). The provider's own HTTP errors are passed on, masked, with their status.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { request as httpsRequest } from 'node:https';
import type { ServerResponse, Agent as HttpAgent } from 'node:http';
import type { TokenUsage } from '../solvers/usage.js';
import { answerMessages } from './messages.js';
import {
  DEFAULT_ANTHROPIC_VERSION,
  FORWARDED_REQUEST_HEADERS,
  FORWARDED_RESPONSE_HEADERS,
  errorEvent,
  errorResponse,
  upstreamAuth,
  type ProxyErrorKind,
  type WireProtocol,
} from './protocols.js';
import { createScrubber, scrubText } from './scrub.js';
import { createSseParser, createStreamAccumulator } from './stream.js';
import type { TrajectoryMessage, TrajectoryStep } from './trajectory.js';
import { answerUsage } from './usage.js';

/** A plain answer beyond this is passed on but not parsed (its usage is then unknown). */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** The part of an error body kept for the trajectory and the log. */
const ERROR_CHARS = 500;

export interface Upstream {
  /** Every protocol's path is appended to it: `https://api.openai.com/v1`. */
  baseUrl: string;
  /** The real provider key: sent upstream only. */
  apiKey: string;
}

export interface ExchangeInput {
  protocol: WireProtocol;
  /** Appended to the upstream base URL (protocols.ts's upstreamPath). */
  path: string;
  body: Buffer;
  stream: boolean;
  headers: IncomingHttpHeaders;
  res: ServerResponse;
  upstream: Upstream;
  /** Masked in everything that goes back and everything recorded. */
  secrets: readonly string[];
  /** Aborted by the deadline, the proxy's close, or the agent going away. */
  signal: AbortSignal;
  /** Why `signal` aborted, once it has. */
  abortKind(): { kind: ProxyErrorKind; outcome: TrajectoryStep['outcome']; message: string };
  /** The longest silence from the provider (before and between bytes). */
  idleMs: number;
  agents: { http: HttpAgent; https: HttpsAgent };
  now(): number;
  /**
   * Run when a 2xx answer has arrived whole or not, before its last bytes reach the agent
   * (which may ask again as soon as they do). Default: none.
   */
  beforeEnd?: (result: ExchangeResult) => Promise<unknown>;
}

export interface ExchangeResult {
  status: number;
  outcome: TrajectoryStep['outcome'];
  error: string | null;
  /** Whether a 2xx answer began: its tokens were then spent, counted or not. */
  began: boolean;
  /** Whether the whole 2xx answer arrived (a stream to its last event, a body that parsed). */
  whole: boolean;
  usage: TokenUsage | null;
  output: TrajectoryMessage[];
  finishReason: string | null;
  /** When the first byte reached the agent (the clock of `now`), or null. */
  firstByteAt: number | null;
}

function sendError(
  res: ServerResponse,
  protocol: WireProtocol,
  kind: ProxyErrorKind,
  message: string,
) {
  const { status, headers, body } = errorResponse(protocol, kind, message);
  if (!res.headersSent) res.writeHead(status, headers);
  res.end(body);
  return status;
}

export function forward(input: ExchangeInput): Promise<ExchangeResult> {
  const { protocol, res, secrets } = input;
  const url = new URL(input.upstream.baseUrl.replace(/\/+$/, '') + input.path);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': input.body.length,
    'accept-encoding': 'identity',
    ...upstreamAuth(protocol, input.upstream.apiKey),
  };
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = input.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (protocol === 'anthropic-messages') headers['anthropic-version'] ??= DEFAULT_ANTHROPIC_VERSION;

  const result: ExchangeResult = {
    status: 0,
    outcome: 'ok',
    error: null,
    began: false,
    whole: false,
    usage: null,
    output: [],
    finishReason: null,
    firstByteAt: null,
  };

  return new Promise<ExchangeResult>((resolve) => {
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      input.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const https = url.protocol === 'https:';
    const upstream = (https ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers,
      agent: https ? input.agents.https : input.agents.http,
    });

    /** The exchange failed on our side of the answer: tell the agent, in its protocol. */
    const fail = (kind: ProxyErrorKind, outcome: TrajectoryStep['outcome'], message: string) => {
      if (settled) return;
      result.outcome = outcome;
      result.error = message;
      upstream.destroy();
      if (!res.headersSent) {
        result.status = sendError(res, protocol, kind, message);
      } else if (input.stream && !res.writableEnded && !res.destroyed) {
        res.end(errorEvent(protocol, kind, message));
      } else {
        res.destroy();
      }
      finish();
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          fail(
            'upstream_timeout',
            'upstream_failed',
            `the model provider sent nothing for ${input.idleMs / 1000} s`,
          ),
        input.idleMs,
      );
    };
    const onAbort = () => {
      const why = input.abortKind();
      if (why.outcome === 'aborted') {
        result.outcome = 'aborted';
        result.error = why.message;
        upstream.destroy();
        finish();
        return;
      }
      fail(why.kind, why.outcome, why.message);
    };
    if (input.signal.aborted) {
      onAbort();
      return;
    }
    input.signal.addEventListener('abort', onAbort, { once: true });
    armIdle();

    upstream.on('error', (error: NodeJS.ErrnoException) => {
      const what = scrubText(error.code ?? error.message, secrets);
      fail(
        'upstream_unreachable',
        'upstream_failed',
        result.status === 0
          ? `the model provider could not be reached: ${what}`
          : `the model provider broke off its answer: ${what}`,
      );
    });

    upstream.on('response', (answer) => {
      armIdle();
      const status = answer.statusCode ?? 502;
      const ok = status >= 200 && status < 300;
      const type = String(answer.headers['content-type'] ?? '');
      const streamed = ok && type.startsWith('text/event-stream');
      const out: Record<string, string> = {};
      for (const name of FORWARDED_RESPONSE_HEADERS) {
        const value = answer.headers[name];
        if (typeof value === 'string' && scrubText(value, secrets) === value) out[name] = value;
      }
      if (streamed) out['cache-control'] = 'no-cache';
      result.status = status;
      result.began = ok;
      res.writeHead(status, out);
      // Headers alone: flushed now, so that the agent sees the stream open without delay.
      res.flushHeaders();
      result.firstByteAt = input.now();

      const scrubber = createScrubber(secrets);
      const accumulator = streamed ? createStreamAccumulator(protocol) : null;
      const parser = accumulator ? createSseParser((e) => accumulator.event(e)) : null;
      const kept: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        armIdle();
        const safe = scrubber.push(chunk);
        // A slow agent holds the provider back rather than filling the proxy's memory.
        if (safe.length > 0 && !res.write(safe)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
        if (parser) parser.push(chunk);
        else {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) kept.push(chunk);
        }
      });
      answer.on('error', () => undefined); // reported by the request's 'error' or 'close'
      answer.on('end', () => {
        if (settled) return;
        const tail = scrubber.end();
        if (accumulator) {
          const summary = accumulator.summary();
          result.output = summary.messages;
          result.finishReason = summary.finishReason;
          result.usage = summary.usage;
          if (summary.error !== null) {
            result.outcome = 'upstream_error';
            result.error = scrubText(
              `the model provider's stream failed: ${summary.error}`,
              secrets,
            );
          } else if (summary.complete) {
            result.whole = true;
          } else {
            result.outcome = 'upstream_failed';
            result.error = 'the model provider ended the stream before its last event';
          }
        } else {
          const text = Buffer.concat(kept).toString('utf8');
          if (ok) readWhole(protocol, text, size, result);
          else {
            result.outcome = 'upstream_error';
            result.error = scrubText(
              `the model provider answered HTTP ${status}: ${text.slice(0, ERROR_CHARS)}`,
              secrets,
            );
          }
        }
        const close = () => {
          if (settled) return;
          res.end(tail);
          finish();
        };
        // The answer's last bytes wait for what must precede them (its cost drawn on a
        // shared cap); a failure of that is the caller's to record.
        if (input.beforeEnd && ok) void input.beforeEnd(result).then(close, close);
        else close();
      });
      answer.on('close', () => {
        if (!answer.complete) {
          fail(
            'upstream_unreachable',
            'upstream_failed',
            'the model provider broke off its answer',
          );
        }
      });
    });

    upstream.end(input.body);
  });
}

function readWhole(protocol: WireProtocol, text: string, size: number, result: ExchangeResult) {
  if (size > MAX_ANSWER_BYTES) {
    result.error = `the answer (${size} bytes) was too large to read its usage`;
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    result.error = 'the answer was not JSON';
    return;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const record = body as Record<string, unknown>;
  result.whole = true;
  const { messages, finishReason } = answerMessages(protocol, record);
  result.output = messages;
  result.finishReason = finishReason;
  result.usage = answerUsage(protocol, record);
}
