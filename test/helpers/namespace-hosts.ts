// Several Docker hosts on one machine, for tests and benches of scale-out: N network
// namespaces (loopback only: workers reach PostgreSQL by its unix socket and their engine by
// its own), one dockerd per namespace with its own data-root, exec-root, socket, pidfile and
// containerd namespace (dockerd starts a containerd of its own under the exec-root), and an
// image (default debian:bookworm-slim) saved once from the machine's engine and loaded into
// each (`load` moves more, e.g. a task image built on the machine's engine, since a host has
// no network to build one). Needs root, iproute2 and nsenter.
//
// dockerd is entered with `nsenter --net=/run/netns/NAME`, never `ip netns exec`, which
// remounts /sys and leaves dockerd dying on "Devices cgroup isn't mounted".
//
// Teardown is by PID, and runs on failure too (a host that did not start is torn down with
// the others): every container and volume is removed through the host's API, then its
// dockerd gets SIGTERM (SIGKILL after 20 s), then any process left whose command line names
// the host's own folder (its containerd and shims) is SIGKILLed, mounts under the folder are
// detached, and the namespace and the folder are removed. If the test process exits without
// teardown, an exit hook SIGKILLs the daemons it started.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createDockerClient, type DockerClient } from '../../src/sandbox/index.js';

const run = promisify(execFile);

export interface NamespaceHost {
  /** 1-based. */
  index: number;
  /** The network namespace (/run/netns/NAME). */
  netns: string;
  /** The host's own folder: data-root, exec-root, socket, log. */
  root: string;
  /** For DOCKER_HOST. */
  dockerHost: string;
  docker: DockerClient;
  /** dockerd's pid. */
  pid: number;
  /** The loaded image's daemon-local id. */
  imageId: string;
  /** The command prefix that runs a program in this host's namespace. */
  enter: string[];
}

export interface NamespaceHosts {
  hosts: NamespaceHost[];
  /** Tears everything down; safe to call twice. Throws the first problem after trying all. */
  close(): Promise<void>;
  /**
   * Saves an image (a name or id) from the machine's engine (or `from`) and loads it into
   * every host, labels and id unchanged; returns the id.
   */
  load(image: string, from?: DockerClient): Promise<string>;
}

export interface NamespaceHostsOptions {
  /** Image loaded into every host, from the machine's engine. Default debian:bookworm-slim. */
  image?: string;
  /** The machine's engine, where the image comes from. Default DOCKER_HOST or the socket. */
  source?: DockerClient;
  /** Longest wait for one dockerd to answer. Default 60 s. */
  startTimeoutMs?: number;
  /**
   * Each dockerd's configuration, written to <root>/daemon.json and passed as --config-file.
   * Default: none, so dockerd reads the machine's /etc/docker/daemon.json.
   */
  daemonJson?: object;
}

const started = new Set<number>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await sleep(50);
  }
  return true;
}

/** Pids whose command line names `root`: the host's containerd and shims. */
function processesUnder(root: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmdline.split('\0').some((arg) => arg.includes(root))) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function mountsUnder(root: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((target) => target === root || target.startsWith(`${root}/`))
    .reverse();
}

interface Made {
  index: number;
  netns?: string;
  root?: string;
  child?: ChildProcess;
  docker?: DockerClient;
}

async function teardown(made: Made): Promise<void> {
  const problems: unknown[] = [];
  const attempt = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      problems.push(error);
    }
  };
  const { docker, child, root, netns } = made;
  if (docker && child?.pid !== undefined && alive(child.pid)) {
    await attempt(async () => {
      const containers = await docker.listContainers({ all: true });
      for (const c of containers) await docker.getContainer(c.Id).remove({ force: true });
      const { Volumes } = await docker.listVolumes();
      for (const v of Volumes ?? []) await docker.getVolume(v.Name).remove({ force: true });
    });
  }
  if (child?.pid !== undefined) {
    const pid = child.pid;
    if (alive(pid)) {
      process.kill(pid, 'SIGTERM');
      if (!(await waitGone(pid, 20_000))) {
        process.kill(pid, 'SIGKILL');
        await waitGone(pid, 5_000);
      }
    }
    started.delete(pid);
  }
  if (root) {
    for (const pid of processesUnder(root)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
      await waitGone(pid, 5_000);
    }
    for (const target of mountsUnder(root)) await attempt(() => run('umount', ['-l', target]));
  }
  if (netns) await attempt(() => run('ip', ['netns', 'del', netns]));
  if (root) await attempt(async () => rmSync(root, { recursive: true, force: true }));
  if (problems.length > 0) throw problems[0];
}

async function startOne(made: Made, timeoutMs: number, daemonJson?: object): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  // Short: containerd's sockets under the exec-root must fit a unix socket path.
  const root = mkdtempSync(`/tmp/pxh-${tag}-`);
  made.root = root;
  const netns = `pxh-${tag}-${made.index}`;
  await run('ip', ['netns', 'add', netns]);
  made.netns = netns;
  await run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
  const socket = join(root, 'docker.sock');
  const config: string[] = [];
  if (daemonJson !== undefined) {
    writeFileSync(join(root, 'daemon.json'), `${JSON.stringify(daemonJson, null, 2)}\n`);
    config.push('--config-file', join(root, 'daemon.json'));
  }
  const log = openSync(join(root, 'dockerd.log'), 'a');
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${netns}`,
      'dockerd',
      '--data-root',
      join(root, 'data'),
      '--exec-root',
      join(root, 'exec'),
      '-H',
      `unix://${socket}`,
      '--pidfile',
      join(root, 'docker.pid'),
      '--containerd-namespace',
      `pxh-${tag}`,
      '--containerd-plugins-namespace',
      `pxh-${tag}-p`,
      '--iptables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
      ...config,
    ],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  made.child = child;
  if (child.pid === undefined) throw new Error(`host ${made.index}: could not start dockerd`);
  started.add(child.pid);
  hookExit();
  const docker = createDockerClient(`unix://${socket}`);
  made.docker = docker;
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const text = readFileSync(join(root, 'dockerd.log'), 'utf8').trim().split('\n');
      throw new Error(`host ${made.index}: dockerd exited: ${text.slice(-3).join(' | ')}`);
    }
    try {
      await docker.ping();
      return;
    } catch {
      if (Date.now() > until)
        throw new Error(`host ${made.index}: dockerd did not answer in ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}

/** `docker save` once from `source`, `docker load` into every host at the same time. */
async function loadInto(made: Made[], source: DockerClient, image: string): Promise<string> {
  const tar = join(made[0]?.root as string, `image-${randomBytes(4).toString('hex')}.tar`);
  try {
    const sourceImage = source.getImage(image);
    const { Id: imageId } = await sourceImage.inspect();
    await pipeline(await sourceImage.get(), createWriteStream(tar));
    await Promise.all(
      made.map(async (m) => {
        const docker = m.docker as DockerClient;
        const stream = await docker.loadImage(createReadStream(tar));
        await new Promise<void>((resolve, reject) =>
          docker.modem.followProgress(stream, (error: Error | null) =>
            error ? reject(error) : resolve(),
          ),
        );
        const loaded = await docker.getImage(imageId).inspect();
        if (loaded.Id !== imageId) throw new Error(`host ${m.index}: loaded ${loaded.Id}`);
      }),
    );
    return imageId;
  } finally {
    rmSync(tar, { force: true });
  }
}

/** Starts `count` namespace hosts, each with its own dockerd and the image loaded. */
export async function startNamespaceHosts(
  count: number,
  options: NamespaceHostsOptions = {},
): Promise<NamespaceHosts> {
  if (process.getuid?.() !== 0) throw new Error('namespace hosts need root (ip netns, dockerd)');
  const image = options.image ?? 'debian:bookworm-slim';
  const source = options.source ?? createDockerClient(process.env['DOCKER_HOST']);
  const made: Made[] = Array.from({ length: count }, (_, i) => ({ index: i + 1 }));
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      const results = await Promise.allSettled(made.map((m) => teardown(m)));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    })());
  try {
    await Promise.all(
      made.map((m) => startOne(m, options.startTimeoutMs ?? 60_000, options.daemonJson)),
    );
    const imageId = await loadInto(made, source, image);
    const hosts = made.map((m) => ({
      index: m.index,
      netns: m.netns as string,
      root: m.root as string,
      dockerHost: `unix://${join(m.root as string, 'docker.sock')}`,
      docker: m.docker as DockerClient,
      pid: m.child?.pid as number,
      imageId,
      enter: ['nsenter', `--net=/run/netns/${m.netns as string}`],
    }));
    const load = (name: string, from: DockerClient = source) => loadInto(made, from, name);
    return { hosts, close, load };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
