// A host process's route to a model proxy: a loopback TCP listener that pipes each connection,
// bytes only, to the proxy's Unix socket, for a model client on the host that speaks HTTP over
// TCP only (the Codex CLI). It is the in-sandbox forwarder's job done in-process: it parses
// nothing and holds nothing, and the proxy still admits a request by its token alone, so
// another local process that finds the port gets no further than without it.
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface HostRoute {
  /** `http://127.0.0.1:PORT/v1`: the base URL a client gives its requests. */
  readonly baseUrl: string;
  /** Stops listening and cuts the connections it piped. Idempotent. */
  close(): Promise<void>;
}

export async function startHostRoute(socketPath: string): Promise<HostRoute> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(socketPath);
    open.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
