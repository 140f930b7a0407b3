// A real Docker registry (Debian's `docker-registry`, distribution 2.x) on 127.0.0.1:<free
// port> with filesystem storage in a temp dir, stopped after the test. The engine treats
// 127.0.0.0/8 registries as insecure-allowed, so `docker push 127.0.0.1:PORT/name:tag` works
// without TLS. Also the docker CLI, for the tag/push/rmi steps that Proctor itself never does.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onCleanup, tempDir } from './temp.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);
const BINARY = '/usr/bin/docker-registry';

export interface Registry {
  /** `127.0.0.1:PORT`, the prefix of every repository pushed to it. */
  host: string;
}

/** Runs the docker CLI; resolves with stdout, rejects with stderr in the message. */
export async function dockerCli(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('docker', args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`docker ${args.join(' ')} failed: ${stderr.trim() || String(error)}`);
  }
}

/** Installs the registry once per machine (it is a Debian package, not an npm one). */
function ensureRegistryInstalled(): void {
  try {
    execFileSync(BINARY, ['--version'], { stdio: 'ignore' });
    return;
  } catch {
    // not installed yet
  }
  if (process.getuid?.() !== 0) {
    throw new Error(`${BINARY} is missing; install it as root: apt-get install -y docker-registry`);
  }
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'docker-registry'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'ignore' });
    install();
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

export async function startRegistry(): Promise<Registry> {
  ensureRegistryInstalled();
  const dir = tempDir('proctor-registry-');
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  const child = spawn(BINARY, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4096)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  // The engine keeps tags and digest references into this registry after it is gone; drop
  // them (not the images, which may be cached fixtures) so that runs do not pile them up.
  onCleanup(async () => {
    const listing = await dockerCli(
      'image',
      'ls',
      '--digests',
      '--format',
      '{{.Repository}}:{{.Tag}} {{.Repository}}@{{.Digest}}',
    );
    const references = listing
      .split(/\s+/)
      .filter((name) => name.startsWith(`127.0.0.1:${port}/`) && !/[:@]<none>$/.test(name));
    for (const name of new Set(references)) await dockerCli('rmi', name).catch(() => undefined);
  });
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
      const response = await fetch(`http://127.0.0.1:${port}/v2/`).catch(() => undefined);
      return response?.status === 200;
    },
    { timeoutMs: 15_000, what: `the registry on 127.0.0.1:${port}` },
  );
  return { host: `127.0.0.1:${port}` };
}

/** Tags `image` into the registry and pushes it; returns the pushed manifest digest. */
export async function pushImage(image: string, target: string): Promise<string> {
  await dockerCli('tag', image, target);
  const output = await dockerCli('push', target);
  const digest = /digest: (sha256:[0-9a-f]{64})/.exec(output)?.[1];
  if (!digest) throw new Error(`docker push ${target} printed no digest:\n${output}`);
  return digest;
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
