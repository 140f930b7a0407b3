// Starts a worker on a namespace host: inside the host's network namespace, against its
// engine (DOCKER_HOST), with its own home and host identity; either test/helpers/
// host-worker-child.ts (no-op container jobs) or the real `proctor worker`. Free of vitest,
// so benches use it too: a test passes `onCleanup` to have it killed afterwards.
import {
  spawn,
  type ChildProcess,
  type ChildProcessByStdio,
  type ChildProcessWithoutNullStreams,
} from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { NamespaceHost } from './namespace-hosts.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const HOST_WORKER_CHILD = fileURLToPath(new URL('./host-worker-child.ts', import.meta.url));

export interface HostWorkerOptions {
  home: string;
  /** PROCTOR_HOST. */
  hostId: string;
  /** PROCTOR_DB. */
  db: string;
  execLog: string;
  slots: number;
  /** Registers a teardown (a test's onCleanup): the worker is SIGKILLed then if still alive. */
  onCleanup?: (fn: () => Promise<void>) => void;
}

export interface HostWorker {
  process: ChildProcess;
  /** The lease owner id, once the worker said `ready`. */
  ready: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export function spawnHostWorker(host: NamespaceHost, options: HostWorkerOptions): HostWorker {
  const [enter, ...enterArgs] = host.enter;
  const child = spawn(
    enter as string,
    [...enterArgs, process.execPath, '--import', 'tsx', HOST_WORKER_CHILD, String(options.slots)],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PROCTOR_HOME: options.home,
        PROCTOR_HOST: options.hostId,
        PROCTOR_DB: options.db,
        DOCKER_HOST: host.dockerHost,
        EXEC_LOG: options.execLog,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return watch(child, options.hostId, 'stdout', /^ready (\S+)$/m, options.onCleanup);
}

export interface ProctorWorkerOptions {
  /** Its home: slots and lease from its proctor.toml. */
  home: string;
  /** PROCTOR_HOST. */
  hostId: string;
  /** PROCTOR_DB. */
  db: string;
  onCleanup?: (fn: () => Promise<void>) => void;
}

/**
 * The real `proctor worker` (bin/proctor.js, so dist/ must be built) on a namespace host:
 * in its network namespace, against its engine, with its own home and host identity.
 */
export function spawnProctorWorker(host: NamespaceHost, options: ProctorWorkerOptions): HostWorker {
  const [enter, ...enterArgs] = host.enter;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PROCTOR_HOME: options.home,
    PROCTOR_HOST: options.hostId,
    PROCTOR_DB: options.db,
    DOCKER_HOST: host.dockerHost,
  };
  const child = spawn(
    enter as string,
    [...enterArgs, process.execPath, join(ROOT, 'bin', 'proctor.js'), 'worker'],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return watch(child, options.hostId, 'stderr', /worker (\S+) ready/, options.onCleanup);
}

function watch(
  child: ChildProcessWithoutNullStreams | ChildProcessByStdio<null, Readable, Readable>,
  hostId: string,
  readyOn: 'stdout' | 'stderr',
  readyLine: RegExp,
  onCleanup: ((fn: () => Promise<void>) => void) | undefined,
): HostWorker {
  let out = '';
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = readyLine.exec(readyOn === 'stdout' ? out : err);
      if (match) resolve(match[1] as string);
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      look();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      look();
    });
    void exited.then(({ code, signal }) =>
      reject(
        new Error(
          `worker ${hostId} exited (${code ?? signal}) before ready: ${err.trim().split('\n').slice(-3).join(' | ')}`,
        ),
      ),
    );
  });
  // A rejection nobody awaits (the worker killed after ready) must not fail the run.
  ready.catch(() => {});
  if (onCleanup) {
    onCleanup(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });
  }
  return { process: child, ready, exited, stderr: () => err };
}
