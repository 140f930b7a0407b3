// The loopback server: the API app on 127.0.0.1 only (any other address is refused before a
// socket opens), for `proctor serve`. Closing it aborts the work of every request in flight,
// so that a shutdown is never held up by requests nobody will read the answers of.
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createApp, type ApiDeps } from './app.js';
import { assertLoopbackAddress } from './guards.js';

export interface RunningServer {
  port: number;
  /** How many requests are being worked on now. */
  busy(): number;
  /**
   * Stops accepting connections, aborts the work of requests in flight, closes every
   * connection, and resolves once the listener is closed and that work has stopped.
   */
  close(): Promise<void>;
}

export async function startServer(
  options: Omit<ApiDeps, 'port' | 'signal'> & { host?: string; port: number },
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  assertLoopbackAddress(host);
  // Host and Origin must name the bound port, known only once the socket listens (port 0).
  let port = 0;
  const shutdown = new AbortController();
  const app = createApp({ ...options, port: () => port, signal: shutdown.signal });
  const inFlight = new Set<Promise<unknown>>();
  const fetch: typeof app.fetch = (request, env, context) => {
    const answer = Promise.resolve(app.fetch(request, env, context));
    const settled = answer.then(
      () => undefined,
      () => undefined,
    );
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return answer;
  };
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, hostname: host, port: options.port }, () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    busy: () => inFlight.size,
    async close() {
      shutdown.abort('the server is shutting down');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      // Aborted work stops at its next step; whatever it wrote is removed before the store
      // it writes to is closed.
      await Promise.all([closed, ...inFlight]);
    },
  };
}
