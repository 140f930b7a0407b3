// A real Docker registry on 127.0.0.1 (bench/local-registry.ts, shared with bench:import
// --pulled), stopped after the test, and registries that refuse or are slow, for the pull tests.
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { dockerCli, launchRegistry, pushImage } from '../../bench/local-registry.js';
import { onCleanup, tempDir } from './temp.js';

export { dockerCli, pushImage };

export interface Registry {
  /** `127.0.0.1:PORT`, the prefix of every repository pushed to it. */
  host: string;
}

export async function startRegistry(): Promise<Registry> {
  const registry = await launchRegistry(tempDir('proctor-registry-'));
  onCleanup(() => registry.stop());
  onCleanup(() => registry.dropReferences());
  return { host: registry.host };
}

/** How a scripted registry refuses: as one that needs a login, denies access, or throttles. */
export type Refusal = 'login' | 'denied' | 'rate-limited';

/**
 * A registry on 127.0.0.1 that refuses every pull, in the words a real one uses (distribution's
 * 401 with a Basic challenge, Docker Hub's 403 `DENIED` and 429 `TOOMANYREQUESTS`): what a
 * registry that wants credentials, or has had enough of us, answers the engine.
 */
export async function startRefusingRegistry(refusal: Refusal): Promise<Registry> {
  const server = createHttpServer((request, response) => {
    const json = { 'Content-Type': 'application/json', ...API_VERSION };
    if (refusal === 'login') {
      response.writeHead(401, { ...json, 'WWW-Authenticate': 'Basic realm="Registry Realm"' });
      response.end(
        JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }),
      );
      return;
    }
    if (request.url === '/v2/') {
      response.writeHead(200, json);
      response.end('{}');
      return;
    }
    if (refusal === 'denied') {
      response.writeHead(403, json);
      response.end(
        JSON.stringify({
          errors: [{ code: 'DENIED', message: 'requested access to the resource is denied' }],
        }),
      );
      return;
    }
    response.writeHead(429, json);
    response.end(
      JSON.stringify({
        errors: [{ code: 'TOOMANYREQUESTS', message: 'You have reached your pull rate limit.' }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { host: `127.0.0.1:${address.port}` };
}

const API_VERSION = { 'Docker-Distribution-Api-Version': 'registry/2.0' };

/**
 * A TCP relay on 127.0.0.1 in front of a registry that sends the registry's answers on at most
 * `bytesPerSecond`: pulls through it (`<relay host>/name@digest`) take seconds rather than
 * milliseconds, long enough to watch their progress.
 */
export async function startSlowRelay(target: Registry, bytesPerSecond: number): Promise<Registry> {
  const [targetHost, targetPort] = target.host.split(':') as [string, string];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(targetPort), targetHost);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    // Each chunk of the answer waits as long as the rate allows before it is sent on.
    let due = Date.now();
    upstream.on('data', (chunk: Buffer) => {
      upstream.pause();
      due = Math.max(due, Date.now()) + (chunk.length * 1000) / bytesPerSecond;
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
        upstream.resume();
      }, due - Date.now());
    });
    // The client's side ends once the last delayed chunk is sent, never before.
    upstream.on('end', () => setTimeout(() => client.end(), Math.max(0, due - Date.now())));
    client.on('close', () => upstream.destroy());
    for (const s of [client, upstream]) {
      s.on('error', () => client.destroy());
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { host: `127.0.0.1:${address.port}` };
}
