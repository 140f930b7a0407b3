import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { notFound, onError } from '../../src/api/errors.js';
import {
  assertLoopbackAddress,
  bodyLimit,
  CONTENT_SECURITY_POLICY,
  jsonBody,
  loopbackHost,
  sameOrigin,
  securityHeaders,
} from '../../src/api/guards.js';
import { ProctorError } from '../../src/errors.js';

const LIMIT = 1024;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

interface Running {
  port: number;
  /** How many requests reached the POST handler. */
  handled: () => number;
  /** The framing headers of the last request, as the server saw them. */
  framing: () => { transferEncoding?: string; contentLength?: string };
  request(options: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Sent one write at a time without Content-Length (chunked transfer encoding). */
    chunks?: string[];
  }): Promise<Reply>;
  raw(head: string): Promise<Reply>;
}

const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
  }
});

/** The guards in their recommended order in front of a few dummy routes, on 127.0.0.1. */
async function start(): Promise<Running> {
  let port = 0;
  let handled = 0;
  let framing: { transferEncoding?: string; contentLength?: string } = {};
  const app = new Hono();
  app.use('*', async (c, next) => {
    framing = {
      transferEncoding: c.req.header('transfer-encoding'),
      contentLength: c.req.header('content-length'),
    };
    await next();
  });
  app.use('*', securityHeaders());
  app.use(
    '*',
    loopbackHost(() => port),
  );
  app.use(
    '*',
    sameOrigin(() => port),
  );
  app.use('/api/*', jsonBody());
  app.use('/api/*', bodyLimit(LIMIT));
  app.get('/', (c) => c.html('<!doctype html><title>Proctor</title>'));
  app.get('/api/x', (c) => c.json({ ok: true }));
  // As an artifact download does: a Response built by hand, not through the context.
  app.get('/api/file', () => new Response('bytes', { headers: { 'Content-Type': 'text/plain' } }));
  app.get('/api/boom', () => {
    throw new Error('database is locked');
  });
  app.post('/api/y', async (c) => {
    handled += 1;
    return c.json({ echo: await c.req.json<unknown>() });
  });
  app.notFound(notFound);
  app.onError(onError);

  const server = await new Promise<http.Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(s),
    ) as http.Server;
  });
  servers.push(server);
  port = (server.address() as AddressInfo).port;

  const collect = (res: http.IncomingMessage, resolve: (reply: Reply) => void) => {
    const parts: Buffer[] = [];
    res.on('data', (part: Buffer) => parts.push(part));
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: Buffer.concat(parts).toString('utf8'),
      }),
    );
  };

  return {
    port,
    handled: () => handled,
    framing: () => framing,
    request: ({ method = 'GET', path = '/api/x', headers = {}, body, chunks }) =>
      new Promise<Reply>((resolve, reject) => {
        // http.request, not fetch: fetch will not send an arbitrary Host or Origin.
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method,
            path,
            agent: false,
            headers: {
              Host: `127.0.0.1:${port}`,
              ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }),
              ...headers,
            },
          },
          (res) => collect(res, resolve),
        );
        req.on('error', reject);
        if (chunks) for (const chunk of chunks) req.write(chunk);
        else if (body !== undefined) req.write(body);
        req.end();
      }),
    // A hand-written request over a socket, for what http.request will not send.
    raw: (head) =>
      new Promise<Reply>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
        const parts: Buffer[] = [];
        socket.on('data', (part: Buffer) => parts.push(part));
        socket.on('error', reject);
        socket.on('end', () => {
          const all = Buffer.concat(parts).toString('utf8');
          const [head = '', text = ''] = all.split('\r\n\r\n', 2);
          const [statusLine = '', ...lines] = head.split('\r\n');
          const headers: http.IncomingHttpHeaders = {};
          for (const line of lines) {
            const colon = line.indexOf(':');
            headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
          }
          resolve({ status: Number(statusLine.split(' ')[1]), headers, text });
        });
      }),
  };
}

function errorCode(reply: Reply): string {
  return (JSON.parse(reply.text) as { error: { code: string } }).error.code;
}

const json = { 'Content-Type': 'application/json' };

describe('loopbackHost', () => {
  it('lets a request naming this server as 127.0.0.1, localhost or [::1] through', async () => {
    const api = await start();
    for (const host of [
      `127.0.0.1:${api.port}`,
      `localhost:${api.port}`,
      `LocalHost:${api.port}`,
      `[::1]:${api.port}`,
    ]) {
      const reply = await api.request({ headers: { Host: host } });
      expect(reply.status, host).toBe(200);
      expect(JSON.parse(reply.text)).toEqual({ ok: true });
    }
  });

  it('refuses a DNS-rebinding Host that names another site on our port', async () => {
    const api = await start();
    const reply = await api.request({ headers: { Host: `evil.example:${api.port}` } });
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.text)).toEqual({
      error: { code: 'FORBIDDEN_HOST', message: expect.stringContaining('evil.example') },
    });
  });

  it('refuses a loopback Host with the wrong port or no port', async () => {
    const api = await start();
    const other = api.port === 65535 ? api.port - 1 : api.port + 1;
    for (const host of [`127.0.0.1:${other}`, `localhost:${other}`, 'localhost', '127.0.0.1']) {
      const reply = await api.request({ headers: { Host: host } });
      expect(reply.status, host).toBe(403);
      expect(errorCode(reply)).toBe('FORBIDDEN_HOST');
    }
  });

  it('refuses a loopback look-alike such as 127.0.0.2 or localhost.', async () => {
    const api = await start();
    for (const host of [`127.0.0.2:${api.port}`, `localhost.:${api.port}`]) {
      const reply = await api.request({ headers: { Host: host } });
      expect(reply.status, host).toBe(403);
      expect(errorCode(reply)).toBe('FORBIDDEN_HOST');
    }
  });

  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const api = await start();
    const reply = await api.raw('GET /api/x HTTP/1.0\r\n\r\n');
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_HOST');
    expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);

    const control = await api.raw(`GET /api/x HTTP/1.0\r\nHost: 127.0.0.1:${api.port}\r\n\r\n`);
    expect(control.status).toBe(200);
  });

  it('refuses an absolute request target naming another host, whatever the Host header', async () => {
    const api = await start();
    const reply = await api.raw(
      `GET http://evil.example:${api.port}/api/x HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_HOST');
  });

  it('refuses an absolute request target that hides another host behind userinfo', async () => {
    const api = await start();
    const reply = await api.raw(
      `GET http://127.0.0.1:${api.port}@evil.example/api/x HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_HOST');
  });

  it('accepts the port-less Host browsers send for port 80', async () => {
    const app = new Hono();
    app.use('*', loopbackHost(80));
    app.get('/', (c) => c.text('ok'));
    expect(
      (await app.request('http://localhost/', { headers: { Host: 'localhost' } })).status,
    ).toBe(200);
    expect(
      (await app.request('http://localhost/', { headers: { Host: 'localhost:8080' } })).status,
    ).toBe(403);
  });

  it('refuses a port that is not an integer from 1 to 65535 when built', () => {
    for (const port of [0, -1, 65536, 80.5, Number.NaN]) {
      expect(() => loopbackHost(port), String(port)).toThrow(ProctorError);
      expect(() => sameOrigin(port), String(port)).toThrow(/1 to 65535/);
    }
  });
});

describe('sameOrigin', () => {
  it('refuses a foreign Origin, even on a GET', async () => {
    const api = await start();
    const reply = await api.request({ headers: { Origin: 'https://evil.example' } });
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_ORIGIN');
  });

  it('refuses a request that sends our Origin and a foreign one', async () => {
    const api = await start();
    for (const origins of [
      [`http://127.0.0.1:${api.port}`, 'https://evil.example'],
      ['https://evil.example', `http://127.0.0.1:${api.port}`],
    ]) {
      const reply = await api.raw(
        `GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\n` +
          origins.map((origin) => `Origin: ${origin}\r\n`).join('') +
          'Connection: close\r\n\r\n',
      );
      expect(reply.status, origins.join(' then ')).toBe(403);
      expect(errorCode(reply)).toBe('FORBIDDEN_ORIGIN');
    }
  });

  it('refuses Origin: null', async () => {
    const api = await start();
    const reply = await api.request({ headers: { Origin: 'null' } });
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_ORIGIN');
  });

  it('refuses another port of localhost and https on our port', async () => {
    const api = await start();
    const other = api.port === 65535 ? api.port - 1 : api.port + 1;
    for (const origin of [`http://localhost:${other}`, `https://localhost:${api.port}`]) {
      const reply = await api.request({ headers: { Origin: origin } });
      expect(reply.status, origin).toBe(403);
    }
  });

  it('lets a POST from the page itself through', async () => {
    const api = await start();
    for (const origin of [
      `http://127.0.0.1:${api.port}`,
      `http://localhost:${api.port}`,
      `http://[::1]:${api.port}`,
    ]) {
      const reply = await api.request({
        method: 'POST',
        path: '/api/y',
        headers: { ...json, Origin: origin, 'Sec-Fetch-Site': 'same-origin' },
        body: '{"a":1}',
      });
      expect(reply.status, origin).toBe(200);
      expect(JSON.parse(reply.text)).toEqual({ echo: { a: 1 } });
    }
  });

  it('refuses a cross-site form POST by its Origin before looking at its body', async () => {
    const api = await start();
    const reply = await api.request({
      method: 'POST',
      path: '/api/y',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: 'https://evil.example',
        'Sec-Fetch-Site': 'cross-site',
      },
      body: 'kind=solve',
    });
    expect(reply.status).toBe(403);
    expect(errorCode(reply)).toBe('FORBIDDEN_ORIGIN');
    expect(api.handled()).toBe(0);
  });

  it('refuses a mutating request marked cross-site or same-site even without an Origin', async () => {
    const api = await start();
    for (const site of ['cross-site', 'same-site']) {
      const reply = await api.request({
        method: 'POST',
        path: '/api/y',
        headers: { ...json, 'Sec-Fetch-Site': site },
        body: '{}',
      });
      expect(reply.status, site).toBe(403);
      expect(errorCode(reply)).toBe('FORBIDDEN_ORIGIN');
    }
    expect(api.handled()).toBe(0);
  });

  it('lets a mutating request typed by the user (Sec-Fetch-Site: none) or without browser headers through', async () => {
    const api = await start();
    for (const headers of [{ ...json, 'Sec-Fetch-Site': 'none' }, json]) {
      const reply = await api.request({ method: 'POST', path: '/api/y', headers, body: '[]' });
      expect(reply.status).toBe(200);
    }
  });

  it('lets a cross-site GET without an Origin through, since its answer cannot be read', async () => {
    const api = await start();
    const reply = await api.request({ headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(reply.status).toBe(200);
  });
});

describe('jsonBody', () => {
  it('refuses a form POST without an Origin (an old browser or a stripped header)', async () => {
    const api = await start();
    const reply = await api.request({
      method: 'POST',
      path: '/api/y',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'kind=solve',
    });
    expect(reply.status).toBe(415);
    expect(JSON.parse(reply.text)).toEqual({
      error: {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringContaining('application/x-www-form-urlencoded'),
      },
    });
    expect(api.handled()).toBe(0);
  });

  it('refuses text/plain, multipart and a missing Content-Type', async () => {
    const api = await start();
    const cases: Array<Record<string, string>> = [
      { 'Content-Type': 'text/plain' },
      { 'Content-Type': 'multipart/form-data; boundary=x' },
      { 'Content-Type': 'application/jsonp' },
      {},
    ];
    for (const headers of cases) {
      const reply = await api.request({ method: 'POST', path: '/api/y', headers, body: '{}' });
      expect(reply.status, JSON.stringify(headers)).toBe(415);
      expect(errorCode(reply)).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    expect(api.handled()).toBe(0);
  });

  it('accepts application/json with parameters and in any case', async () => {
    const api = await start();
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const reply = await api.request({
        method: 'POST',
        path: '/api/y',
        headers: { 'Content-Type': type },
        body: '"hi"',
      });
      expect(reply.status, type).toBe(200);
      expect(JSON.parse(reply.text)).toEqual({ echo: 'hi' });
    }
  });

  it('leaves GET alone', async () => {
    const api = await start();
    const reply = await api.request({ headers: { 'Content-Type': 'text/plain' } });
    expect(reply.status).toBe(200);
  });
});

describe('bodyLimit', () => {
  it('refuses a body whose Content-Length is over the limit without running the route', async () => {
    const api = await start();
    const body = JSON.stringify('x'.repeat(LIMIT));
    const reply = await api.request({ method: 'POST', path: '/api/y', headers: json, body });
    expect(api.framing().contentLength).toBe(String(LIMIT + 2));
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.text)).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than ${LIMIT} bytes`,
      },
    });
    expect(api.handled()).toBe(0);
  });

  it('refuses a chunked body without Content-Length once its bytes pass the limit', async () => {
    const api = await start();
    const chunks = ['"', ...Array.from({ length: 4 }, () => 'x'.repeat(LIMIT / 2)), '"'];
    const reply = await api.request({ method: 'POST', path: '/api/y', headers: json, chunks });
    expect(api.framing()).toEqual({ transferEncoding: 'chunked', contentLength: undefined });
    expect(reply.status).toBe(413);
    expect(errorCode(reply)).toBe('PAYLOAD_TOO_LARGE');
    expect(api.handled()).toBe(0);
  });

  it('passes a chunked body at the limit through intact', async () => {
    const api = await start();
    const value = 'y'.repeat(LIMIT - 2);
    const chunks = ['"', value.slice(0, 500), value.slice(500), '"'];
    const reply = await api.request({ method: 'POST', path: '/api/y', headers: json, chunks });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ echo: value });
  });

  it('passes a body with Content-Length at the limit', async () => {
    const api = await start();
    const body = JSON.stringify('z'.repeat(LIMIT - 2));
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    const reply = await api.request({ method: 'POST', path: '/api/y', headers: json, body });
    expect(reply.status).toBe(200);
  });

  it('refuses a negative or fractional limit when built', () => {
    expect(() => bodyLimit(-1)).toThrow(ProctorError);
    expect(() => bodyLimit(1.5)).toThrow(/maxBytes/);
  });
});

describe('securityHeaders', () => {
  function expectSecurityHeaders(reply: Reply, api: boolean) {
    expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("base-uri 'none'");
    expect(reply.headers['x-frame-options']).toBe('DENY');
    expect(reply.headers['referrer-policy']).toBe('no-referrer');
    expect(reply.headers['x-content-type-options']).toBe('nosniff');
    expect(reply.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(reply.headers['cache-control']).toBe(api ? 'no-store' : undefined);
  }

  it('sends every header on a 200 from the API', async () => {
    const api = await start();
    const reply = await api.request({});
    expect(reply.status).toBe(200);
    expectSecurityHeaders(reply, true);
  });

  it('sends every header on a 403 refusal', async () => {
    const api = await start();
    const reply = await api.request({ headers: { Host: `evil.example:${api.port}` } });
    expect(reply.status).toBe(403);
    expectSecurityHeaders(reply, true);
  });

  it('sends every header on a 404 for an unknown API route', async () => {
    const api = await start();
    const reply = await api.request({ path: '/api/nope' });
    expect(reply.status).toBe(404);
    expect(JSON.parse(reply.text)).toEqual({
      error: { code: 'NOT_FOUND', message: 'No route for GET /api/nope' },
    });
    expectSecurityHeaders(reply, true);
  });

  it('sends every header on 413 and 415 refusals', async () => {
    const api = await start();
    const tooLarge = await api.request({
      method: 'POST',
      path: '/api/y',
      headers: json,
      body: 'x'.repeat(LIMIT + 1),
    });
    expect(tooLarge.status).toBe(413);
    expectSecurityHeaders(tooLarge, true);
    const wrongType = await api.request({ method: 'POST', path: '/api/y', body: '{}' });
    expect(wrongType.status).toBe(415);
    expectSecurityHeaders(wrongType, true);
  });

  it('sends every header on a hand-built Response and on a 500 from a throwing route', async () => {
    const api = await start();
    const file = await api.request({ path: '/api/file' });
    expect(file.status).toBe(200);
    expect(file.text).toBe('bytes');
    expectSecurityHeaders(file, true);
    const boom = await api.request({ path: '/api/boom' });
    expect(boom.status).toBe(500);
    expect(boom.text).not.toContain('locked');
    expectSecurityHeaders(boom, true);
  });

  it('sends the headers but no Cache-Control on the page and on a 404 outside /api', async () => {
    const api = await start();
    const page = await api.request({ path: '/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expectSecurityHeaders(page, false);
    const missing = await api.request({ path: '/nope' });
    expect(missing.status).toBe(404);
    expectSecurityHeaders(missing, false);
  });
});

describe('the guards outside Node (app.request)', () => {
  // Served by @hono/node-server the guards read Node's own request and response; under
  // app.request() or another runtime they fall back to the Fetch API objects.
  function app() {
    const a = new Hono();
    a.use('*', securityHeaders());
    a.use('*', loopbackHost(8080));
    a.use('*', sameOrigin(8080));
    a.use('/api/*', jsonBody());
    a.get('/api/x', (c) => c.json({ ok: true }));
    a.get('/api/file', () => new Response('bytes'));
    a.post('/api/y', (c) => c.json({ ok: true }));
    return a;
  }
  const host = { Host: '127.0.0.1:8080' };

  it('sends every security header, on a hand-built Response too', async () => {
    for (const path of ['/api/x', '/api/file']) {
      const res = await app().request(`http://127.0.0.1:8080${path}`, { headers: host });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
  });

  it('refuses a foreign Host, a foreign Origin and a form POST', async () => {
    const foreignHost = await app().request('http://evil.example:8080/api/x', {
      headers: { Host: 'evil.example:8080' },
    });
    expect(foreignHost.status).toBe(403);
    expect(foreignHost.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const foreignOrigin = await app().request('http://127.0.0.1:8080/api/x', {
      headers: { ...host, Origin: 'https://evil.example' },
    });
    expect(foreignOrigin.status).toBe(403);
    const form = await app().request('http://127.0.0.1:8080/api/y', {
      method: 'POST',
      headers: { ...host, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(form.status).toBe(415);
  });
});

describe('assertLoopbackAddress', () => {
  it('accepts 127.0.0.1', () => {
    expect(() => assertLoopbackAddress('127.0.0.1')).not.toThrow();
  });

  it.each([
    '0.0.0.0',
    '::',
    '192.168.1.20',
    '10.0.0.5',
    'localhost',
    'example.com',
    '127.0.0.2',
    '',
  ])('refuses %j with USAGE', (host) => {
    let thrown: unknown;
    try {
      assertLoopbackAddress(host);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProctorError);
    expect((thrown as ProctorError).code).toBe('USAGE');
    expect((thrown as ProctorError).message).toBe(
      `proctor serve binds 127.0.0.1 only, not \`${host}\``,
    );
  });
});
