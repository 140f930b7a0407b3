// The isolation profile: the one function every solver, evaluator, init and capture container
// is created through, so that no call site can forget a field.
//
// network none; read-only root; bounded tmpfs; a numeric non-zero uid:gid (the init
// container alone runs as root, with only CHOWN, DAC_OVERRIDE and FOWNER, to prepare a
// workspace template and hand it over; jobs copy templates as the sandbox user); all capabilities dropped; no-new-privileges; CPU, memory (swap equal to
// memory) and PID limits; named volumes only (no bind mounts, so no Docker socket and no
// host paths); no devices; never privileged; no credential-like environment; labels that name
// the job; an optional OCI runtime (gVisor's runsc).
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
    NetworkDisabled: true,
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
      Mounts: volumes.map((m: VolumeMount) => ({
        Type: 'volume' as const,
        Source: m.volume,
        Target: m.target,
        ReadOnly: m.readOnly ?? false,
        // (@types/dockerode wants Labels and DriverConfig too; the engine does not.)
        VolumeOptions: { NoCopy: true } as MountSettings['VolumeOptions'],
      })),
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
