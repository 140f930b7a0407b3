// npm run bench:solver — the overhead of one solver tool call: `run_command {"command":
// "true"}` through Proctor (argument validation, deadline, exec with bounded capture and exit
// polling) against `docker exec <container> true` through the Docker CLI, in one run,
// interleaved, on the same idle solver container. Target: ≤ 1.0×.
// Usage: npm run bench:solver [-- --calls 50]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBundle } from '../src/oracle/index.js';
import {
  createDockerClient,
  createWorkspace,
  removeOwned,
  resolveImage,
  startIdleContainer,
} from '../src/sandbox/index.js';
import { callTool, createDeadline } from '../src/solvers/index.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '50' } } });
const CALLS = Number(values.calls);
const ROOT = join(import.meta.dirname, '..');

const docker = createDockerClient(process.env['DOCKER_HOST']);
const bundle = await loadBundle(join(ROOT, 'test/fixtures/bundles/shell-task'));
const image = await resolveImage(docker, bundle.environment);
const owner = {
  job: `bench-${randomBytes(4).toString('hex')}`,
  attempt: 1,
  home: '/proctor-bench',
};
try {
  const volume = await createWorkspace(docker, {
    owner,
    role: 'solver',
    image: image.localId,
    repoPath: bundle.workdir,
    baseCommit: bundle.baseCommit,
    uid: 1000,
    gid: 1000,
  });
  const container = await startIdleContainer(docker, {
    owner,
    role: 'solver',
    image: image.localId,
    uid: 1000,
    gid: 1000,
    workdir: bundle.workdir,
    workspace: { volume, target: bundle.workdir },
  });
  const sandbox = {
    docker,
    containerId: container.id,
    workdir: bundle.workdir,
    user: '1000:1000',
    outputBytes: bundle.limits.outputBytes,
    patchBytes: bundle.limits.patchBytes,
  };
  const deadline = createDeadline(3_600_000);
  const args = JSON.stringify({ command: 'true', timeout_s: null });
  const proctorCall = async () => {
    const t = performance.now();
    const result = await callTool(sandbox, 'run_command', args, deadline);
    if (!result.ok) throw new Error(result.content);
    return performance.now() - t;
  };
  const cliCall = () => {
    const t = performance.now();
    const r = spawnSync('docker', [
      'exec',
      '-u',
      '1000:1000',
      '-w',
      bundle.workdir,
      container.id,
      'true',
    ]);
    if (r.status !== 0) throw new Error(String(r.stderr));
    return performance.now() - t;
  };
  await proctorCall();
  cliCall();
  const p: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    p.push(await proctorCall());
    c.push(cliCall());
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const [pm, cm] = [median(p), median(c)];
  console.log(`run_command "true", median of ${CALLS} interleaved calls`);
  console.log(
    `proctor tool call ${pm.toFixed(1)} ms; docker exec (CLI) ${cm.toFixed(1)} ms; ratio ${(pm / cm).toFixed(2)}×`,
  );
  deadline.dispose();
} finally {
  await removeOwned(docker, owner);
}
