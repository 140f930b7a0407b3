// npm run bench:sandbox — the sandbox's own costs, against plain Docker in the same run (this
// machine is shared and noisy: compare ratios, not absolutes). Rounds are interleaved.
//
//  (a) a sandboxed `true` through src/sandbox, twice: runToCompletion (create through the
//      isolation profile, attach, start, wait, remove), and the oracle's way (startIdleContainer,
//      execInContainer, removeContainer); against `docker run --rm` with the same flags (network
//      none, read-only root, cap-drop ALL, no-new-privileges, the same limits, tmpfs, user and
//      init). Median and p90 of each, and their ratios. No target.
//  (b) createWorkspace of a generated repository (20,000 files by default, one commit, built into
//      an image FROM debian:bookworm-slim with git) against `docker volume create` and a plain
//      `docker run … cp -a` of the same tree (with its .git) into it. Target: ≤ 1.2×.
//  (c) 1 GiB of output through execInContainer's bounded capture, in MB/s, against a raw pipe
//      (`docker exec … head -c 1G /dev/zero` read by Node without bounds) in the same hardened
//      container, and the peak RSS growth of this process during Proctor's capture. Targets:
//      ≥ 0.5× the raw pipe, < 64 MiB.
//
// Everything it makes is labelled (proctor.home=/proctor-bench/sandbox and a job id of its own;
// the image with proctor.bench) and removed at the end, on an error, or on Ctrl-C.
// Usage: npm run bench:sandbox [-- --rounds 20 --init-rounds 3 --capture-rounds 3]
// Environment, for quick runs: BENCH_SANDBOX_FILES (default 20000), BENCH_SANDBOX_FILE_BYTES
// (average bytes per file, default 1024), BENCH_SANDBOX_CAPTURE_MIB (default 1024).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { childRunner, commitAndBuild } from './generated-image.js';
import {
  createDockerClient,
  createWorkspace,
  execInContainer,
  labelsFor,
  removeContainer,
  pruneTemplates,
  removeOwned,
  removeVolume,
  runToCompletion,
  startIdleContainer,
  type SandboxSpec,
} from '../src/sandbox/index.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    'init-rounds': { type: 'string', default: '3' },
    'capture-rounds': { type: 'string', default: '3' },
  },
});
const ROUNDS = Number(values.rounds);
const INIT_ROUNDS = Number(values['init-rounds']);
const CAPTURE_ROUNDS = Number(values['capture-rounds']);
const FILES = Number(process.env['BENCH_SANDBOX_FILES'] ?? 20_000);
const FILE_BYTES = Number(process.env['BENCH_SANDBOX_FILE_BYTES'] ?? 1024);
const CAPTURE_BYTES = Number(process.env['BENCH_SANDBOX_CAPTURE_MIB'] ?? 1024) * 1024 * 1024;
const MiB = 1024 * 1024;

const docker = createDockerClient(process.env['DOCKER_HOST']);
const run = randomBytes(4).toString('hex');
const owner = { job: `bench-sandbox-${run}`, attempt: 1, home: '/proctor-bench/sandbox' };
const imageTag = `proctor-bench-sandbox:${run}`;
const imageLabel = `proctor.bench=sandbox-${run}`;
const labelFlags = Object.entries(labelsFor(owner, 'probe')).flatMap(([k, v]) => [
  '--label',
  `${k}=${v}`,
]);
const temp = mkdtempSync(join(tmpdir(), 'proctor-bench-sandbox-'));
const { sh, children } = childRunner();

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Nearest-rank percentile. */
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

// Cleanup: by label, twice over if need be (a request in flight at Ctrl-C may land after the
// first listing), then the image and the temp dir. Idempotent.
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of children) child.kill('SIGKILL');
    for (let pass = 0; pass < 2; pass++) await removeOwned(docker, owner).catch(() => {});
    // The workspace templates createWorkspace made (they carry no job label).
    await pruneTemplates(docker, owner.home).catch(() => undefined);
    const images = await docker.listImages({ filters: { label: [imageLabel] } }).catch(() => []);
    for (const image of images) {
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => {});
    }
    rmSync(temp, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: removing what the bench made…`);
    void cleanup().finally(() => process.exit(130));
  });
}

// The flags of Proctor's isolation profile (src/sandbox/profile.ts) at its defaults, for docker
// run: the baseline pays for the same isolation, not for less.
const USER = { uid: 1000, gid: 1000 };
const PROFILE_FLAGS = [
  ...labelFlags,
  '--user',
  `${USER.uid}:${USER.gid}`,
  '--workdir',
  '/',
  '--network',
  'none',
  '--read-only',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--tmpfs',
  '/tmp:rw,nosuid,nodev,noexec,size=64m,mode=1777',
  '--memory',
  '2048m',
  '--memory-swap',
  '2048m',
  '--cpus',
  '1',
  '--pids-limit',
  '256',
  '--ipc',
  'private',
  '--init',
  '--log-driver',
  'none',
];

async function benchTrue(image: string): Promise<void> {
  const spec: SandboxSpec = { owner, role: 'probe', image, cmd: ['true'], workdir: '/', ...USER };
  const viaRun = async () => {
    const r = await runToCompletion(docker, spec, { timeoutMs: 60_000 });
    if (r.exitCode !== 0) throw new Error(`sandboxed true exited ${r.exitCode}: ${r.stderr}`);
  };
  const viaExec = async () => {
    const container = await startIdleContainer(docker, { ...spec, role: 'evaluator' });
    try {
      const r = await execInContainer(docker, container.id, {
        cmd: ['true'],
        user: `${USER.uid}:${USER.gid}`,
        timeoutMs: 60_000,
        outputBytes: 64 * 1024,
      });
      if (r.exitCode !== 0) throw new Error(`exec true exited ${r.exitCode}: ${r.stderr}`);
    } finally {
      await removeContainer(container);
    }
  };
  const viaDocker = () => sh('docker', ['run', '--rm', ...PROFILE_FLAGS, image, 'true']);
  const ways = [
    ['runToCompletion', viaRun],
    ['idle container + exec (the oracle)', viaExec],
    ['docker run --rm, same flags', viaDocker],
  ] as const;
  for (const [, fn] of ways) await fn(); // warm-up
  const ms: number[][] = ways.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [, fn]] of ways.entries()) ms[i]!.push(await timed(fn));
  }
  const base = ms[ways.length - 1]!;
  const [bm, b90] = [percentile(base, 50), percentile(base, 90)];
  console.log(`(a) sandboxed \`true\`, ${ROUNDS} interleaved rounds (after one warm-up each)`);
  console.log(['way', 'median ms', 'p90 ms', 'median ratio', 'p90 ratio'].join('\t'));
  for (const [i, [name]] of ways.entries()) {
    const [m, p] = [percentile(ms[i]!, 50), percentile(ms[i]!, 90)];
    const ratios = i === ways.length - 1 ? ['', ''] : [(m / bm).toFixed(2), (p / b90).toFixed(2)];
    console.log([name, m.toFixed(0), p.toFixed(0), ...ratios].join('\t'));
  }
  console.log('(no target; ratios are against docker run --rm)\n');
}

/** A repository of FILES files in directories of 100, one commit; its image id and commit. */
async function buildRepositoryImage(): Promise<{ image: string; commit: string }> {
  const started = performance.now();
  const repo = join(temp, 'context/repo');
  const line = 'the quick brown fox jumps over the lazy dog, said module %d line %d\n';
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, `pkg${String(Math.floor(i / 100)).padStart(3, '0')}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    let text = '';
    for (let l = 0; text.length < FILE_BYTES; l++)
      text += line.replace('%d', `${i}`).replace('%d', `${l}`);
    writeFileSync(join(dir, `mod${i % 100}.py`), text.slice(0, FILE_BYTES));
  }
  const commit = await commitAndBuild(sh, join(temp, 'context'), imageTag, imageLabel);
  const image = (await docker.getImage(imageTag).inspect()).Id;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `generated ${FILES} files of ${FILE_BYTES} bytes, one commit, image built in ${seconds} s`,
  );
  return { image, commit };
}

async function benchWorkspace(image: string, commit: string): Promise<void> {
  const volumes: string[] = [];
  const viaProctor = async () => {
    volumes.push(
      await createWorkspace(docker, {
        owner,
        role: 'evaluator',
        image,
        repoPath: '/repo',
        baseCommit: commit,
        ...USER,
      }),
    );
  };
  const viaCopy = async () => {
    const volume = `${owner.job}-cp-${randomBytes(4).toString('hex')}`;
    await sh('docker', ['volume', 'create', ...labelFlags, volume]);
    volumes.push(volume);
    await sh('docker', [
      'run',
      '--rm',
      ...labelFlags,
      '--network',
      'none',
      '--mount',
      `type=volume,src=${volume},dst=/dst,volume-nocopy`,
      image,
      'cp',
      '-a',
      '/repo/.',
      '/dst/',
    ]);
  };
  const drop = async () => {
    for (const v of volumes.splice(0)) await removeVolume(docker, v);
  };
  const proctor: number[] = [];
  const copy: number[] = [];
  await viaProctor(); // warm-up: the image's files into the page cache
  await viaCopy();
  await drop();
  for (let round = 0; round < INIT_ROUNDS; round++) {
    proctor.push(await timed(viaProctor));
    await drop();
    copy.push(await timed(viaCopy));
    await drop();
  }
  const [pm, cm] = [percentile(proctor, 50), percentile(copy, 50)];
  const ratio = pm / cm;
  console.log(`(b) workspace init, ${INIT_ROUNDS} interleaved rounds (after one warm-up each)`);
  console.log(['way', 'median ms', 'p90 ms', 'runs ms'].join('\t'));
  for (const [name, xs] of [
    ['createWorkspace', proctor],
    ['volume create + docker run cp -a', copy],
  ] as const) {
    const all = xs.map((x) => x.toFixed(0)).join(' ');
    console.log(
      [name, percentile(xs, 50).toFixed(0), percentile(xs, 90).toFixed(0), all].join('\t'),
    );
  }
  console.log(`ratio ${ratio.toFixed(2)}× (target ≤ 1.2×): ${verdict(ratio <= 1.2)}\n`);
}

async function benchCapture(image: string): Promise<void> {
  const container = await startIdleContainer(docker, {
    owner,
    role: 'evaluator',
    image,
    workdir: '/',
    ...USER,
  });
  const cmd = ['head', '-c', String(CAPTURE_BYTES), '/dev/zero'];
  const user = `${USER.uid}:${USER.gid}`;
  let peakGrowth = 0;
  const viaProctor = async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      const r = await execInContainer(docker, container.id, {
        cmd,
        user,
        timeoutMs: 600_000,
        outputBytes: MiB,
      });
      if (r.exitCode !== 0 || r.stdoutBytes !== CAPTURE_BYTES) {
        throw new Error(`capture: exit ${r.exitCode}, ${r.stdoutBytes} bytes: ${r.stderr}`);
      }
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    peakGrowth = Math.max(peakGrowth, peak - before);
  };
  const viaPipe = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('docker', ['exec', '--user', user, container.id, ...cmd], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.add(child);
      let bytes = 0;
      child.stdout.on('data', (c: Buffer) => (bytes += c.length));
      child.on('error', reject);
      child.on('close', (code) => {
        children.delete(child);
        if (code === 0 && bytes === CAPTURE_BYTES) resolve();
        else reject(new Error(`docker exec: exit ${code}, ${bytes} bytes`));
      });
    });
  const proctor: number[] = [];
  const pipe: number[] = [];
  try {
    for (let round = 0; round < CAPTURE_ROUNDS; round++) {
      proctor.push(await timed(viaProctor));
      pipe.push(await timed(viaPipe));
    }
  } finally {
    await removeContainer(container);
  }
  const rate = (ms: number) => CAPTURE_BYTES / 1e6 / (ms / 1000);
  const [pr, rr] = [rate(percentile(proctor, 50)), rate(percentile(pipe, 50))];
  const ratio = pr / rr;
  const mib = CAPTURE_BYTES / MiB;
  console.log(`(c) ${mib} MiB of output, ${CAPTURE_ROUNDS} interleaved rounds, medians`);
  console.log(['way', 'MB/s', 'runs MB/s'].join('\t'));
  for (const [name, xs] of [
    ['execInContainer (1 MiB kept)', proctor],
    ['docker exec | Node, unbounded', pipe],
  ] as const) {
    const all = xs.map((x) => rate(x).toFixed(0)).join(' ');
    console.log([name, rate(percentile(xs, 50)).toFixed(0), all].join('\t'));
  }
  console.log(`ratio ${ratio.toFixed(2)}× (target ≥ 0.5×): ${verdict(ratio >= 0.5)}`);
  const growth = peakGrowth / MiB;
  console.log(
    `peak RSS growth during capture ${growth.toFixed(1)} MiB (worst round; target < 64 MiB): ${verdict(growth < 64)}`,
  );
}

try {
  const debian = (await docker.getImage('debian:bookworm-slim').inspect()).Id;
  await benchTrue(debian);
  const { image, commit } = await buildRepositoryImage();
  await benchWorkspace(image, commit);
  await benchCapture(debian);
} finally {
  await cleanup();
}
