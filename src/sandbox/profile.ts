// The isolation profile: the one function every solver, evaluator, init and capture container
// is created through, so that no call site can forget a field.
//
// network none; read-only root; bounded tmpfs; a numeric non-zero uid:gid (the init
// container alone runs as root, with only CHOWN, DAC_OVERRIDE and FOWNER, to prepare a
// workspace template and hand it over; jobs copy templates as the sandbox user); all capabilities dropped; no-new-privileges; CPU, memory (swap equal to
// memory) and PID limits; named volumes only (no bind mounts, so no Docker socket and no
// host paths) with one narrow exception, the model proxy's socket folder (below); no devices; never privileged; no credential-like environment; labels that name
// the job; an optional OCI runtime (gVisor's runsc).
import { lstatSync, readdirSync } from 'node:fs';
import type { ContainerCreateOptions, MountSettings } from 'dockerode';
import { ProctorError } from '../errors.js';
import { labelsFor, type Owner, type Role } from './labels.js';

export interface VolumeMount {
  volume: string;
  target: string;
  readOnly?: boolean;
}

export interface WorkspaceMount extends VolumeMount {
  /**
   * A memory-backed workspace (a tmpfs volume) starts with this many MiB of tree, which its
   * pages charge to the container: they are added to the memory limit (and swap), so that the
   * task's processes keep all of `limits.memoryMb`, as with a disk-backed one. Default 0.
   */
  memoryMb?: number;
}

export interface TmpfsMount {
  path: string;
  sizeMb: number;
  /** Allow executing files from it (the evaluator's runner). Default false: noexec. */
  exec?: boolean;
}

export interface Limits {
  /** CPUs (fractional). Default 1. */
  cpus?: number;
  /** Memory in MiB; swap is set equal, so there is none. Default 2048. */
  memoryMb?: number;
  /** Default 256. */
  pids?: number;
}

export interface SandboxSpec {
  owner: Owner;
  role: Role;
  /** The daemon-local image id (sha256:…), never a tag. */
  image: string;
  cmd: string[];
  /** Numeric uid and gid; must be non-zero except for the init role. */
  uid: number;
  gid: number;
  /** The working directory, normally the workspace mount. */
  workdir: string;
  /** The one volume holding the checkout; its path must be disjoint from every other mount. */
  workspace?: WorkspaceMount;
  /** Harness-owned volumes (capture's candidate mount, say). */
  mounts?: VolumeMount[];
  /** tmpfs mounts. Default one: /tmp, 64 MiB, noexec. */
  tmpfs?: TmpfsMount[];
  env?: Record<string, string>;
  limits?: Limits;
  /** An OCI runtime registered with the engine, such as `runsc`. Default: the engine's. */
  runtime?: string;
  /** The model proxy's socket folder, the one host path a container may see (below). */
  proxySocket?: ProxySocketMount;
}

/**
 * The one bind mount the profile allows: the folder of one solve's model proxy (src/proxy/),
 * read-only, holding exactly one entry, its socket `model.sock`, and nothing else (a folder,
 * not the file, since a socket re-created by the proxy would leave a file mount stale). It is
 * checked on the host as the container is created: a real folder (no symlink), whose only
 * entry is a socket of that name. The token the proxy checks, not the mount, admits requests.
 */
export interface ProxySocketMount {
  /** The host folder (absolute). */
  dir: string;
  /** Where the container sees it (absolute), disjoint from every other mount. */
  target: string;
}

/** The one name the proxy's socket folder may hold (src/proxy/options.ts SOCKET_NAME). */
export const PROXY_SOCKET_NAME = 'model.sock';

/** The folder's bind mount, once it is checked to hold the proxy's socket alone. */
function proxySocketBind(mount: ProxySocketMount): MountSettings {
  const dir = checkPath(mount.dir, 'proxy socket folder');
  const stats = lstatSync(dir, { throwIfNoEntry: false });
  if (!stats?.isDirectory()) throw invalid(`proxy socket folder ${dir} is not a folder`);
  const entries = readdirSync(dir);
  const socket = lstatSync(`${dir}/${PROXY_SOCKET_NAME}`, { throwIfNoEntry: false });
  if (entries.length !== 1 || entries[0] !== PROXY_SOCKET_NAME || !socket?.isSocket()) {
    throw invalid(
      `proxy socket folder ${dir} must hold exactly one socket, ${PROXY_SOCKET_NAME} (it holds ${entries.slice(0, 5).join(', ') || 'nothing'})`,
    );
  }
  return {
    Type: 'bind',
    Source: dir,
    Target: checkPath(mount.target, 'proxy socket target'),
    ReadOnly: true,
  };
}

/**
 * The environment of the agent's command (src/agents/run.ts), which goes to an exec rather
 * than the container's creation: the profile refuses every credential-like name there, and
 * here admits one exception, exactly: such a variable may carry the proxy's run-scoped token,
 * which is no provider's key (it opens only this solve's proxy, which holds the key on the
 * host, and is worthless once the solve ends), and nothing else. A known provider key as any
 * variable's value is refused whatever its name.
 */
export function checkAgentEnv(
  env: Record<string, string>,
  runToken: string,
  secrets: readonly string[] = [],
): void {
  if (!/^[A-Za-z0-9._-]{16,256}$/.test(runToken)) {
    throw invalid('the run token must be 16 to 256 letters, digits, ".", "_" or "-"');
  }
  if (secrets.includes(runToken)) throw invalid('the run token is a provider key');
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw invalid(`invalid environment name ${JSON.stringify(name)}`);
    if (secrets.some((secret) => secret !== '' && value.includes(secret))) {
      throw invalid(`environment variable ${name} holds a provider key`);
    }
    if (CREDENTIAL_NAME.test(name) && value !== runToken) {
      throw invalid(
        `credential-like environment variable ${name} is not allowed (only the run token may be given so)`,
      );
    }
  }
}

/**
 * The writable /tmp of a container that runs task code: half its memory (tmpfs pages count
 * against the memory limit), at least 64 MiB and at most 1 GiB, executable (test suites and
 * solvers build and run programs there).
 */
export function workTmpfs(memoryMb: number): TmpfsMount {
  return {
    path: '/tmp',
    sizeMb: Math.min(1024, Math.max(64, Math.floor(memoryMb / 2))),
    exec: true,
  };
}

export const INIT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'] as const;

/** Environment names that look like credentials; none may reach a task container. */
export const CREDENTIAL_NAME = /(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

function invalid(message: string): ProctorError {
  return new ProctorError('SANDBOX_INVALID', `sandbox: ${message}`);
}

function checkPath(path: string, what: string): string {
  if (!path.startsWith('/') || path.includes('\0') || path.split('/').includes('..')) {
    throw invalid(
      `${what} must be an absolute path without .. or NUL, got ${JSON.stringify(path)}`,
    );
  }
  return path.replace(/\/+$/, '') || '/';
}

const overlaps = (a: string, b: string) =>
  a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`) || a === '/' || b === '/';

export function hardenedContainerOptions(spec: SandboxSpec): ContainerCreateOptions {
  const isInit = spec.role === 'init';
  for (const [name, value] of [
    ['uid', spec.uid],
    ['gid', spec.gid],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 2 ** 31 - 1) {
      throw invalid(`${name} must be a numeric id, got ${String(value)}`);
    }
    if (value === 0 && !isInit)
      throw invalid(`${name} must be non-zero for a ${spec.role} container`);
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(spec.image)) {
    throw invalid(
      `image must be a daemon-local image id (sha256:…), got ${JSON.stringify(spec.image)}`,
    );
  }
  const env = spec.env ?? {};
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw invalid(`invalid environment name ${JSON.stringify(name)}`);
    if (CREDENTIAL_NAME.test(name))
      throw invalid(`credential-like environment variable ${name} is not allowed`);
  }

  const tmpfs = spec.tmpfs ?? [{ path: '/tmp', sizeMb: 64 }];
  const harness = [
    ...(spec.mounts ?? []).map((m) => ({ path: checkPath(m.target, 'mount target') })),
    ...(spec.proxySocket
      ? [{ path: checkPath(spec.proxySocket.target, 'proxy socket target') }]
      : []),
    ...tmpfs.map((t) => ({ path: checkPath(t.path, 'tmpfs path') })),
  ];
  const workspace = spec.workspace ? checkPath(spec.workspace.target, 'workspace path') : undefined;
  if (workspace) {
    for (const mount of harness) {
      if (overlaps(workspace, mount.path)) {
        throw invalid(`workspace ${workspace} overlaps the harness mount ${mount.path}`);
      }
    }
  }
  for (let i = 0; i < harness.length; i++) {
    for (let j = i + 1; j < harness.length; j++) {
      const [a, b] = [harness[i]?.path ?? '', harness[j]?.path ?? ''];
      if (a === b) throw invalid(`two mounts at ${a}`);
    }
  }

  const cpus = spec.limits?.cpus ?? 1;
  const memoryMb = spec.limits?.memoryMb ?? 2048;
  const pids = spec.limits?.pids ?? 256;
  if (!(cpus > 0 && cpus <= 64)) throw invalid(`cpus must be in (0, 64], got ${cpus}`);
  if (!(Number.isInteger(memoryMb) && memoryMb >= 16))
    throw invalid(`memory_mb must be an integer >= 16, got ${memoryMb}`);
  if (!(Number.isInteger(pids) && pids >= 8))
    throw invalid(`pids must be an integer >= 8, got ${pids}`);
  for (const t of tmpfs) {
    if (!(Number.isInteger(t.sizeMb) && t.sizeMb >= 1 && t.sizeMb <= 4096)) {
      throw invalid(`tmpfs ${t.path} size must be 1..4096 MiB, got ${t.sizeMb}`);
    }
  }

  const workspaceMb = spec.workspace?.memoryMb ?? 0;
  if (!(Number.isInteger(workspaceMb) && workspaceMb >= 0)) {
    throw invalid(`a workspace's memory must be a whole number of MiB, got ${workspaceMb}`);
  }

  const volumes = [...(spec.workspace ? [spec.workspace] : []), ...(spec.mounts ?? [])];
  const memory = (memoryMb + workspaceMb) * 1024 * 1024;
  return {
    Image: spec.image,
    Cmd: spec.cmd,
    User: `${spec.uid}:${spec.gid}`,
    WorkingDir: spec.workdir,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: labelsFor(spec.owner, spec.role),
    // No network: NetworkMode "none" (below) gives the container its own network namespace with
    // loopback alone. Not NetworkDisabled as well: that also leaves /etc/hosts empty, so that
    // `localhost` does not resolve (node's EAI_AGAIN) where SWE-bench's `--network none`
    // containers, and every test suite that starts a server on localhost, expect it to.
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      CapAdd: isInit ? [...INIT_CAPABILITIES] : [],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      Devices: [],
      Binds: [],
      // NoCopy: a fresh volume must not be seeded with whatever the image has at that path.
      Mounts: [
        ...volumes.map((m: VolumeMount) => ({
          Type: 'volume' as const,
          Source: m.volume,
          Target: m.target,
          ReadOnly: m.readOnly ?? false,
          // (@types/dockerode wants Labels and DriverConfig too; the engine does not.)
          VolumeOptions: { NoCopy: true } as MountSettings['VolumeOptions'],
        })),
        ...(spec.proxySocket ? [proxySocketBind(spec.proxySocket)] : []),
      ],
      Tmpfs: Object.fromEntries(
        tmpfs.map((t) => [
          t.path,
          `rw,nosuid,nodev,${t.exec ? 'exec' : 'noexec'},size=${t.sizeMb}m,mode=1777`,
        ]),
      ),
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(cpus * 1e9),
      PidsLimit: pids,
      IpcMode: 'private',
      // docker-init (tini) reaps zombies and forwards signals to the command.
      Init: true,
      AutoRemove: false,
      RestartPolicy: { Name: 'no' },
      LogConfig: { Type: 'none', Config: {} },
      ...(spec.runtime ? { Runtime: spec.runtime } : {}),
    },
  };
}
