// The request guards in front of every API route and the page. Proctor's API listens on
// 127.0.0.1 without authentication, so the threats are other web pages in the user's browser:
//
//   - DNS rebinding: a page on `evil.example` re-points its name at 127.0.0.1 and talks to us
//     as same-origin. Its requests still say `Host: evil.example:PORT` → loopbackHost().
//   - Cross-site requests (CSRF): a foreign page posts a form or a no-cors fetch. It carries a
//     foreign `Origin` / `Sec-Fetch-Site` → sameOrigin(); and it can only send form or text
//     bodies, never `application/json` without a CORS preflight we never answer → jsonBody().
//   - Framing, sniffing and referrer leaks → securityHeaders(); oversized bodies → bodyLimit().
//
// Each guard answers with the API's JSON error shape `{ error: { code, message } }` itself,
// so it works whether or not `app.onError` is installed. Suggested order (outermost first):
//
//   app.use('*', securityHeaders());          // first, so that refusals carry the headers too
//   app.use('*', loopbackHost(port));
//   app.use('*', sameOrigin(port));
//   app.use('/api/*', jsonBody());
//   app.use('/api/*', bodyLimit(maxBytes));
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ProctorError } from '../errors.js';

/**
 * The port the server listens on, or a function returning it: a function lets the app be built
 * before `listen()` picks a free port (port 0), as tests do.
 */
export type PortSource = number | (() => number);

/** The policy sent with every response: our own scripts, styles and images only; no framing. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'";

const SECURITY_HEADERS = [
  ['Content-Security-Policy', CONTENT_SECURITY_POLICY],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
] as const;

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'] as const;
// Methods that cannot change state. Everything else (POST, PUT, PATCH, DELETE and any
// unknown method) is treated as mutating, so a new method cannot slip past the checks.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SAME_ORIGIN_FETCH_SITES = new Set(['same-origin', 'none']);
// Refused header values are echoed in messages for diagnosis, but never at unbounded length.
const MAX_ECHO = 100;

/**
 * Node's own request and response when @hono/node-server serves the app (its `c.env`);
 * undefined under `app.request()` or another runtime. Reading a header from Node's parsed
 * `headers` object is cheap, whereas the first `c.req.header()` builds a WHATWG Headers object
 * from the raw headers.
 */
function nodeOf(c: Context): { incoming: IncomingMessage; outgoing: ServerResponse } | undefined {
  const env = c.env as { incoming?: unknown; outgoing?: unknown } | undefined;
  return env?.incoming instanceof IncomingMessage && env.outgoing instanceof ServerResponse
    ? (env as { incoming: IncomingMessage; outgoing: ServerResponse })
    : undefined;
}

/**
 * A request header, as `c.req.header()` gives it. On Node repeated headers are joined with
 * `, ` as in the Fetch API, except those Node keeps the first of (Host, Content-Type and the
 * others it lists in `message.headers`), which is also the value the adapter builds the URL from.
 */
function header(c: Context, name: string): string | undefined {
  const node = nodeOf(c);
  if (node === undefined) return c.req.header(name);
  const value = node.incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The refusal, as a middleware's answer. The guards are plain functions, not `async` ones: on
 * the way through they return `next()` itself, which spares a promise per guard per request.
 */
function deny(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
): Promise<Response> {
  return Promise.resolve(c.json({ error: { code, message } }, status));
}

function echo(value: string): string {
  return value.length > MAX_ECHO ? `${value.slice(0, MAX_ECHO)}…` : value;
}

function isMutating(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

function isPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

function portReader(port: PortSource, what: string): () => number | undefined {
  if (typeof port === 'function') {
    // Read on every request: the port is only known once the server listens.
    return () => {
      const value = port();
      return isPort(value) ? value : undefined;
    };
  }
  if (!isPort(port)) {
    throw new ProctorError(
      'USAGE',
      `Expected \`${what}\` port to be an integer from 1 to 65535, got \`${String(port)}\``,
    );
  }
  return () => port;
}

/** `127.0.0.1:<port>`, `localhost:<port>`, `[::1]:<port>`; also without the port when it is 80. */
function loopbackAuthorities(port: number): string[] {
  const withPort = LOOPBACK_NAMES.map((name) => `${name}:${port}`);
  // Browsers omit the default port from Host and Origin.
  return port === 80 ? [...withPort, ...LOOPBACK_NAMES] : withPort;
}

/** `loopbackAuthorities` mapped by `shape`, made again only when the port changes. */
function perPort<T>(shape: (authorities: string[]) => T): (port: number) => T {
  let last: { port: number; value: T } | undefined;
  return (port) => {
    if (last?.port !== port) last = { port, value: shape(loopbackAuthorities(port)) };
    return last.value;
  };
}

/**
 * The authority of a request URL as the adapter built it: `http://<authority>/<path>`, with the
 * path always present. Anything unusual before the path (userinfo, an odd port) stays in the
 * authority and so fails the exact-match allowlist.
 */
function authorityOf(url: string): string {
  const start = url.indexOf('//') + 2;
  const end = url.indexOf('/', start);
  return (end === -1 ? url.slice(start) : url.slice(start, end)).toLowerCase();
}

/**
 * Refuses (403 FORBIDDEN_HOST) any request whose `Host` header is missing or is not this
 * server's loopback address and port (`127.0.0.1:<port>`, `localhost:<port>`,
 * `[::1]:<port>`; the name is case-insensitive). This defeats DNS rebinding: a rebound page
 * reaches 127.0.0.1 but still names its own host. An absolute-form request target
 * (`GET http://other/ HTTP/1.1`) must name a loopback authority too.
 */
export function loopbackHost(port: PortSource): MiddlewareHandler {
  const readPort = portReader(port, 'loopbackHost');
  const allowedFor = perPort((authorities) => ({
    set: new Set(authorities),
    text: authorities.join(', '),
  }));
  return function loopbackHost(c, next) {
    const current = readPort();
    if (current === undefined) {
      return deny(c, 403, 'FORBIDDEN_HOST', 'The server is not listening on a known port yet');
    }
    const allowed = allowedFor(current);
    const host = header(c, 'host');
    if (host === undefined || host === '') {
      return deny(
        c,
        403,
        'FORBIDDEN_HOST',
        `A Host header is required; expected one of ${allowed.text}`,
      );
    }
    if (!allowed.set.has(host.toLowerCase())) {
      return deny(
        c,
        403,
        'FORBIDDEN_HOST',
        `Host \`${echo(host)}\` is not this server; expected one of ${allowed.text}`,
      );
    }
    // The adapter builds the URL from the request target when it is absolute, ignoring Host.
    const target = authorityOf(c.req.url);
    if (!allowed.set.has(target)) {
      return deny(
        c,
        403,
        'FORBIDDEN_HOST',
        `Request target \`${echo(target)}\` is not this server; expected one of ${allowed.text}`,
      );
    }
    return next();
  };
}

/**
 * Refuses (403 FORBIDDEN_ORIGIN) a request from another origin: an `Origin` header, when
 * present, must be `http://127.0.0.1:<port>`, `http://localhost:<port>` or
 * `http://[::1]:<port>` (`Origin: null`, sent by sandboxed frames and some redirects, is
 * refused). For mutating methods a `Sec-Fetch-Site` other than `same-origin` or `none` is
 * refused too, which catches a browser request that carries no Origin; `same-site` is refused
 * because another port of localhost is the same site but not the same origin. Clients that
 * send neither header (curl, scripts) pass.
 */
export function sameOrigin(port: PortSource): MiddlewareHandler {
  const readPort = portReader(port, 'sameOrigin');
  const allowedFor = perPort((authorities) => {
    const origins = authorities.map((authority) => `http://${authority}`);
    return { set: new Set(origins), text: origins.join(', ') };
  });
  return function sameOrigin(c, next) {
    const current = readPort();
    if (current === undefined) {
      return deny(c, 403, 'FORBIDDEN_ORIGIN', 'The server is not listening on a known port yet');
    }
    const origin = header(c, 'origin');
    if (origin !== undefined) {
      const allowed = allowedFor(current);
      if (!allowed.set.has(origin.toLowerCase())) {
        return deny(
          c,
          403,
          'FORBIDDEN_ORIGIN',
          `Origin \`${echo(origin)}\` may not use this API; expected one of ${allowed.text}`,
        );
      }
    }
    if (isMutating(c.req.method)) {
      const site = header(c, 'sec-fetch-site');
      if (site !== undefined && !SAME_ORIGIN_FETCH_SITES.has(site)) {
        return deny(
          c,
          403,
          'FORBIDDEN_ORIGIN',
          `${c.req.method} from another site is refused (Sec-Fetch-Site: ${echo(site)})`,
        );
      }
    }
    return next();
  };
}

/**
 * Refuses (415 UNSUPPORTED_MEDIA_TYPE) a mutating request whose `Content-Type` is not
 * `application/json` (parameters such as `; charset=utf-8` allowed). Cross-site forms and
 * no-cors fetches can only send form, multipart or text bodies, so this blocks them even
 * without an Origin header. It applies to bodiless requests too (a no-cors POST without a
 * body is also possible cross-site): clients send `Content-Type: application/json` on every
 * POST, PUT, PATCH and DELETE.
 */
export function jsonBody(): MiddlewareHandler {
  return function jsonBody(c, next) {
    if (isMutating(c.req.method)) {
      const contentType = header(c, 'content-type');
      const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
      if (mediaType !== 'application/json') {
        return deny(
          c,
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          contentType === undefined
            ? `${c.req.method} requires Content-Type application/json, got none`
            : `${c.req.method} requires Content-Type application/json, got \`${echo(contentType)}\``,
        );
      }
    }
    return next();
  };
}

/**
 * Refuses (413 PAYLOAD_TOO_LARGE) a request body longer than `maxBytes`. hono's body-limit
 * rejects on a declared `Content-Length` before reading anything (Node's parser never
 * delivers more bytes than that header declares), and otherwise (chunked transfer) counts the
 * bytes as they stream in, stopping at the limit and buffering at most `maxBytes`.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  if (!Number.isInteger(maxBytes) || maxBytes < 0) {
    throw new ProctorError(
      'USAGE',
      `Expected \`maxBytes\` to be an integer >= 0, got \`${String(maxBytes)}\``,
    );
  }
  const limit = honoBodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      deny(c, 413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes`),
  });
  // No route reads the body of a GET or HEAD, so there is nothing to bound.
  return (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limit(c, next));
}

/**
 * Adds to every response, refusals and errors included: the Content-Security-Policy above,
 * `X-Frame-Options: DENY` (for browsers without frame-ancestors), `Referrer-Policy:
 * no-referrer`, `X-Content-Type-Options: nosniff`, `Cross-Origin-Opener-Policy: same-origin`
 * and `Cross-Origin-Resource-Policy: same-origin` (other sites cannot embed our responses,
 * e.g. an artifact as a script); on `/api/*` also `Cache-Control: no-store`, since job data
 * and logs must not linger in caches. Register it first so that it wraps every other guard.
 */
export function securityHeaders(): MiddlewareHandler {
  return function securityHeaders(c, next) {
    const api = c.req.path === '/api' || c.req.path.startsWith('/api/');
    const node = nodeOf(c);
    if (node !== undefined) {
      // On Node they go on the outgoing response itself: Node merges them into whatever head
      // the adapter writes, so every response has them (hand-built ones, refusals, errors), and
      // a route's own response needs no Headers object of its own.
      for (const [name, value] of SECURITY_HEADERS) node.outgoing.setHeader(name, value);
      if (api) node.outgoing.setHeader('Cache-Control', 'no-store');
      return next();
    }
    // Elsewhere (app.request): set before the route, they go into the response as it is made;
    // a response the route built by hand does not have them yet, and gets them afterwards.
    const set = () => {
      for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
      if (api) c.header('Cache-Control', 'no-store');
    };
    set();
    return next().then(() => {
      if (!c.res.headers.has('Content-Security-Policy')) set();
    });
  };
}

/**
 * Throws USAGE unless `host` is `127.0.0.1`, the only address `proctor serve` binds: the API
 * has no authentication, so it must not be reachable from other machines (`0.0.0.0`, `::`, a
 * LAN address), nor from a name whose resolution we do not control (`localhost` included).
 */
export function assertLoopbackAddress(host: string): void {
  if (host !== '127.0.0.1') {
    throw new ProctorError('USAGE', `proctor serve binds 127.0.0.1 only, not \`${host}\``, {
      data: { host },
    });
  }
}
