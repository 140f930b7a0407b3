// A real Docker registry (Debian's `docker-registry`, distribution 2.x) on 127.0.0.1:<free
// port> with filesystem storage in a given folder, and the docker CLI steps (tag, push, rmi)
// that Proctor itself never does. Used by the tests (test/helpers/registry.ts, which stops it
// after each test) and by `bench:import --pulled`, the stand-in for a public registry. The
// engine treats 127.0.0.0/8 registries as insecure-allowed, so `docker push 127.0.0.1:PORT/…`
// works without TLS.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BINARY = '/usr/bin/docker-registry';
const READY_MS = 15_000;

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

export interface LocalRegistry {
  /** `127.0.0.1:PORT`, the prefix of every repository pushed to it. */
  host: string;
  /** Drops the engine's tags and digest references into this registry (never the images). */
  dropReferences(): Promise<void>;
  /** Stops the registry process and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts a registry storing under `dir` and waits until its `/v2/` answers 200. */
export async function launchRegistry(dir: string): Promise<LocalRegistry> {
  ensureRegistryInstalled();
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
  const host = `127.0.0.1:${port}`;
  const registry: LocalRegistry = {
    host,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
    // The engine keeps tags and digest references into this registry after it is gone; drop
    // them (not the images, which may be cached fixtures) so that runs do not pile them up.
    async dropReferences() {
      const listing = await dockerCli(
        'image',
        'ls',
        '--digests',
        '--format',
        '{{.Repository}}:{{.Tag}} {{.Repository}}@{{.Digest}}',
      );
      const references = listing
        .split(/\s+/)
        .filter((name) => name.startsWith(`${host}/`) && !/[:@]<none>$/.test(name));
      for (const name of new Set(references)) await dockerCli('rmi', name).catch(() => undefined);
    },
  };
  const deadline = Date.now() + READY_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
    const response = await fetch(`http://${host}/v2/`).catch(() => undefined);
    if (response?.status === 200) return registry;
    if (Date.now() > deadline) {
      await registry.stop();
      throw new Error(`the registry on ${host} did not answer within ${READY_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Tags `image` into the registry and pushes it; returns the pushed manifest digest. */
export async function pushImage(image: string, target: string): Promise<string> {
  await dockerCli('tag', image, target);
  const output = await dockerCli('push', target);
  const digest = /digest: (sha256:[0-9a-f]{64})/.exec(output)?.[1];
  if (!digest) throw new Error(`docker push ${target} printed no digest:\n${output}`);
  return digest;
}
