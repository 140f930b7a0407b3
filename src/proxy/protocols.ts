// The three wire protocols the model proxy serves, and what differs between them: the route an
// agent posts to, where its credential is, how the real key goes upstream, and the shape of an
// error its SDK understands. Everything the proxy answers on its own (a refused token, a budget
// stop, an unreachable provider) goes out in the request's protocol's error shape.

export const WIRE_PROTOCOLS = ['openai-chat', 'openai-responses', 'anthropic-messages'] as const;
export type WireProtocol = (typeof WIRE_PROTOCOLS)[number];

/**
 * The path each protocol appends to the upstream base URL, which follows the configuration's
 * convention (`base_url` ends in `/v1`): `https://api.openai.com/v1`,
 * `https://api.anthropic.com/v1`.
 */
export const UPSTREAM_PATH: Record<WireProtocol, string> = {
  'openai-chat': '/chat/completions',
  'openai-responses': '/responses',
  'anthropic-messages': '/messages',
};

/**
 * The protocol of a request path. SDKs differ on whether the base URL carries `/v1` (the
 * OpenAI SDK's does, the Anthropic SDK adds it), so both spellings are taken; a query string is
 * ignored (Anthropic's `?beta=true`).
 */
export function protocolOf(url: string | undefined): WireProtocol | null {
  const path = (url ?? '').split('?')[0]?.replace(/\/+$/, '') ?? '';
  switch (path.replace(/^\/v1(?=\/)/, '')) {
    case '/chat/completions':
      return 'openai-chat';
    case '/responses':
      return 'openai-responses';
    case '/messages':
      return 'anthropic-messages';
    default:
      return null;
  }
}

/** Whether a path is a model listing (GET), answered by the proxy with the configured model. */
export function isModelList(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0]?.replace(/\/+$/, '') ?? '';
  return path === '/v1/models' || path === '/models';
}

/**
 * The credential a request presents: `Authorization: Bearer …` (OpenAI-style clients) or
 * `x-api-key` (Anthropic-style ones), whichever is there; undefined when neither is.
 */
export function presentedToken(headers: {
  authorization?: string | undefined;
  'x-api-key'?: string | string[] | undefined;
}): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return bearer;
  const key = headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/** The headers that carry the real key to the provider, per protocol. */
export function upstreamAuth(protocol: WireProtocol, apiKey: string): Record<string, string> {
  return protocol === 'anthropic-messages'
    ? { 'x-api-key': apiKey }
    : { authorization: `Bearer ${apiKey}` };
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

/** OpenAI's error `type` and Anthropic's, per kind (the ones their SDKs map to classes). */
const TYPES: Record<ProxyErrorKind, { openai: string; anthropic: string }> = {
  unauthorized: { openai: 'invalid_request_error', anthropic: 'authentication_error' },
  bad_request: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  not_found: { openai: 'invalid_request_error', anthropic: 'not_found_error' },
  method_not_allowed: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  too_large: { openai: 'invalid_request_error', anthropic: 'request_too_large' },
  budget_exceeded: { openai: 'insufficient_quota', anthropic: 'rate_limit_error' },
  deadline_exceeded: { openai: 'insufficient_quota', anthropic: 'rate_limit_error' },
  upstream_unreachable: { openai: 'server_error', anthropic: 'api_error' },
  upstream_timeout: { openai: 'server_error', anthropic: 'api_error' },
  closed: { openai: 'server_error', anthropic: 'overloaded_error' },
};

export interface ProxyErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An error answer in the protocol's shape (OpenAI's when the protocol is unknown). */
export function errorResponse(
  protocol: WireProtocol | null,
  kind: ProxyErrorKind,
  message: string,
): ProxyErrorResponse {
  const type = TYPES[kind];
  const body =
    protocol === 'anthropic-messages'
      ? { type: 'error', error: { type: type.anthropic, message } }
      : { error: { message, type: type.openai, code: kind, param: null } };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (kind === 'budget_exceeded' || kind === 'deadline_exceeded' || kind === 'unauthorized') {
    headers['x-should-retry'] = 'false';
  }
  return { status: STATUS[kind], headers, body: JSON.stringify(body) };
}

/**
 * The same error as one server-sent event, for a stream whose headers are already out: what
 * each SDK raises as an error mid-stream (`error` events).
 */
export function errorEvent(protocol: WireProtocol, kind: ProxyErrorKind, message: string): string {
  const type = TYPES[kind];
  if (protocol === 'anthropic-messages') {
    const data = { type: 'error', error: { type: type.anthropic, message } };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }
  if (protocol === 'openai-responses') {
    const data = { type: 'error', code: kind, message, param: null, sequence_number: 0 };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }
  return `data: ${JSON.stringify({ error: { message, type: type.openai, code: kind } })}\n\n`;
}
