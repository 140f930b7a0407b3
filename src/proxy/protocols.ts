// The four wire protocols the model proxy serves, and what differs between them: the route an
// agent posts to, where its credential is, how the real key goes upstream, and the shape of an
// error its SDK understands. Everything the proxy answers on its own (a refused token, a budget
// stop, an unreachable provider) goes out in the request's protocol's error shape.
//
// Google's Gemini API (`gemini-generate-content`) differs from the other three in its route:
// the model is in the path (`/v1beta/models/{model}:generateContent`), and so is streaming
// (`:streamGenerateContent?alt=sse`), where the others put both in the body.

export const WIRE_PROTOCOLS = [
  'openai-chat',
  'openai-responses',
  'anthropic-messages',
  'gemini-generate-content',
] as const;
export type WireProtocol = (typeof WIRE_PROTOCOLS)[number];

/** A request path's protocol, and for Gemini the model and the method its path names. */
export interface Route {
  protocol: WireProtocol;
  /** Gemini only: the model named by the path, and whether the method is the streamed one. */
  gemini?: { model: string; stream: boolean; sse: boolean };
}

/**
 * A Gemini model path: `models/NAME:METHOD` after the API version (`v1beta`, as Gemini CLI and
 * `@google/genai` send it, or `v1`, `v1alpha`). A model name is letters, digits, `.`, `_`, `-`.
 */
const GEMINI_PATH =
  /^(?:\/v1(?:beta|alpha)?)?\/models\/([A-Za-z0-9._-]{1,200}):(generateContent|streamGenerateContent)$/;

/**
 * The path each protocol appends to the upstream base URL, which follows the configuration's
 * convention (`base_url` ends in the API version): `https://api.openai.com/v1`,
 * `https://api.anthropic.com/v1`, `https://generativelanguage.googleapis.com/v1beta`. A Gemini
 * path names the model sent upstream; a streamed one asks for server-sent events, whatever the
 * agent asked (the proxy reads the stream as SSE).
 */
export function upstreamPath(protocol: WireProtocol, model: string, stream: boolean): string {
  switch (protocol) {
    case 'openai-chat':
      return '/chat/completions';
    case 'openai-responses':
      return '/responses';
    case 'anthropic-messages':
      return '/messages';
    case 'gemini-generate-content':
      return stream
        ? `/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`
        : `/models/${encodeURIComponent(model)}:generateContent`;
  }
}

/**
 * The route of a request path. SDKs differ on whether the base URL carries `/v1` (the OpenAI
 * SDK's does, the Anthropic SDK adds it), so both spellings are taken; a query string is
 * ignored (Anthropic's `?beta=true`) but for Gemini's `alt`.
 */
export function routeOf(url: string | undefined): Route | null {
  const [rawPath = '', query = ''] = (url ?? '').split(/\?(.*)/s);
  const path = rawPath.replace(/\/+$/, '');
  switch (path.replace(/^\/v1(?=\/)/, '')) {
    case '/chat/completions':
      return { protocol: 'openai-chat' };
    case '/responses':
      return { protocol: 'openai-responses' };
    case '/messages':
      return { protocol: 'anthropic-messages' };
  }
  const gemini = GEMINI_PATH.exec(path);
  if (gemini === null) return null;
  return {
    protocol: 'gemini-generate-content',
    gemini: {
      model: gemini[1] as string,
      stream: gemini[2] === 'streamGenerateContent',
      sse: new URLSearchParams(query).get('alt') === 'sse',
    },
  };
}

/** The protocol of a request path (routeOf's), or null. */
export function protocolOf(url: string | undefined): WireProtocol | null {
  return routeOf(url)?.protocol ?? null;
}

/** Whether a path is a model listing (GET), answered by the proxy with the configured model. */
export function isModelList(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0]?.replace(/\/+$/, '') ?? '';
  return path === '/v1/models' || path === '/models';
}

/**
 * The credential a request presents: `Authorization: Bearer …` (OpenAI-style clients),
 * `x-api-key` (Anthropic-style ones), `x-goog-api-key` or the `key` query parameter (Google's),
 * the first one there; undefined when none is.
 */
export function presentedToken(
  headers: {
    authorization?: string | undefined;
    'x-api-key'?: string | string[] | undefined;
    'x-goog-api-key'?: string | string[] | undefined;
  },
  url?: string,
): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return bearer;
  for (const key of [headers['x-api-key'], headers['x-goog-api-key']]) {
    if (typeof key === 'string' && key !== '') return key;
  }
  const query = (url ?? '').split(/\?(.*)/s)[1];
  const key = query === undefined ? null : new URLSearchParams(query).get('key');
  return key !== null && key !== '' ? key : undefined;
}

/** The headers that carry the real key to the provider, per protocol. */
export function upstreamAuth(protocol: WireProtocol, apiKey: string): Record<string, string> {
  switch (protocol) {
    case 'anthropic-messages':
      return { 'x-api-key': apiKey };
    case 'gemini-generate-content':
      return { 'x-goog-api-key': apiKey };
    default:
      return { authorization: `Bearer ${apiKey}` };
  }
}

/**
 * Request headers passed on to the provider: the ones that select API behaviour. Everything
 * else (the agent's credential, cookies, organisation and project ids, its user agent) stays.
 */
export const FORWARDED_REQUEST_HEADERS = [
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'openai-beta',
] as const;

/** Anthropic requires a version header; this is the one its SDKs send. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * Response headers passed back to the agent: the content type, request ids for a user's bug
 * report, and retry hints. Nothing else of the provider's reaches the sandbox.
 */
export const FORWARDED_RESPONSE_HEADERS = [
  'content-type',
  'retry-after',
  'x-request-id',
  'request-id',
  'openai-processing-ms',
] as const;

/** Why the proxy answered a request itself. */
export type ProxyErrorKind =
  | 'unauthorized'
  | 'bad_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'budget_exceeded'
  | 'deadline_exceeded'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'closed';

const STATUS: Record<ProxyErrorKind, number> = {
  unauthorized: 401,
  bad_request: 400,
  not_found: 404,
  method_not_allowed: 405,
  too_large: 413,
  // 429 is what both SDK families treat as a quota answer; `x-should-retry: false` (below)
  // tells them not to retry it, since no retry can succeed once the solve's budget is spent.
  budget_exceeded: 429,
  deadline_exceeded: 429,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  closed: 503,
};

/**
 * OpenAI's error `type`, Anthropic's, and Google's `status` (its canonical codes), per kind:
 * the ones their SDKs map to classes or retry rules.
 */
const TYPES: Record<ProxyErrorKind, { openai: string; anthropic: string; google: string }> = {
  unauthorized: {
    openai: 'invalid_request_error',
    anthropic: 'authentication_error',
    google: 'UNAUTHENTICATED',
  },
  bad_request: {
    openai: 'invalid_request_error',
    anthropic: 'invalid_request_error',
    google: 'INVALID_ARGUMENT',
  },
  not_found: { openai: 'invalid_request_error', anthropic: 'not_found_error', google: 'NOT_FOUND' },
  method_not_allowed: {
    openai: 'invalid_request_error',
    anthropic: 'invalid_request_error',
    google: 'UNIMPLEMENTED',
  },
  too_large: {
    openai: 'invalid_request_error',
    anthropic: 'request_too_large',
    google: 'INVALID_ARGUMENT',
  },
  budget_exceeded: {
    openai: 'insufficient_quota',
    anthropic: 'rate_limit_error',
    google: 'RESOURCE_EXHAUSTED',
  },
  deadline_exceeded: {
    openai: 'insufficient_quota',
    anthropic: 'rate_limit_error',
    google: 'RESOURCE_EXHAUSTED',
  },
  upstream_unreachable: { openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  upstream_timeout: {
    openai: 'server_error',
    anthropic: 'api_error',
    google: 'DEADLINE_EXCEEDED',
  },
  closed: { openai: 'server_error', anthropic: 'overloaded_error', google: 'UNAVAILABLE' },
};

export interface ProxyErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The error object of each protocol's error body. */
function errorBody(protocol: WireProtocol | null, kind: ProxyErrorKind, message: string) {
  const type = TYPES[kind];
  switch (protocol) {
    case 'anthropic-messages':
      return { type: 'error', error: { type: type.anthropic, message } };
    case 'gemini-generate-content':
      return { error: { code: STATUS[kind], message, status: type.google } };
    default:
      return { error: { message, type: type.openai, code: kind, param: null } };
  }
}

/** An error answer in the protocol's shape (OpenAI's when the protocol is unknown). */
export function errorResponse(
  protocol: WireProtocol | null,
  kind: ProxyErrorKind,
  message: string,
): ProxyErrorResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (kind === 'budget_exceeded' || kind === 'deadline_exceeded' || kind === 'unauthorized') {
    headers['x-should-retry'] = 'false';
  }
  const body = errorBody(protocol, kind, message);
  return { status: STATUS[kind], headers, body: JSON.stringify(body) };
}

/**
 * The same error as one server-sent event, for a stream whose headers are already out: what
 * each SDK raises as an error mid-stream (`error` events). `@google/genai` raises a chunk that
 * is a bare JSON error object (it reads one before looking for `data:` lines), so Gemini's is
 * that, on a line of its own.
 */
export function errorEvent(protocol: WireProtocol, kind: ProxyErrorKind, message: string): string {
  const type = TYPES[kind];
  switch (protocol) {
    case 'anthropic-messages': {
      const data = { type: 'error', error: { type: type.anthropic, message } };
      return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
    }
    case 'openai-responses': {
      const data = { type: 'error', code: kind, message, param: null, sequence_number: 0 };
      return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
    }
    case 'gemini-generate-content':
      return `${JSON.stringify(errorBody(protocol, kind, message))}\n`;
    case 'openai-chat':
      return `data: ${JSON.stringify({ error: { message, type: type.openai, code: kind } })}\n\n`;
  }
}
