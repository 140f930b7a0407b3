// The loopback server: the API app on 127.0.0.1 only (any other address is refused before a
// socket opens), for `proctor serve`.
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createApp, type ApiDeps } from './app.js';
import { assertLoopbackAddress } from './guards.js';

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

export async function startServer(
  options: Omit<ApiDeps, 'port'> & { host?: string; port: number },
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  assertLoopbackAddress(host);
  // Host and Origin must name the bound port, known only once the socket listens (port 0).
  let port = 0;
  const app = createApp({ ...options, port: () => port });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port }, () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
