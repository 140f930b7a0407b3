// A process that makes one workspace of the git-history fixture with a template store of its
// own, as a second worker process on the same engine would: it prints `waiting`, starts on
// SIGUSR1 (so that two of them start at once), and prints the volume and the wall time of the
// preparation it did itself (0 when it took another process's template) as JSON.
//
// usage: template-child.ts HOME JOB IMAGE BASE_COMMIT
import { createDockerClient } from '../../src/sandbox/docker.js';
import { createTemplateStore } from '../../src/sandbox/template.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';

const [home, job, image, base] = process.argv.slice(2);
if (!home || !job || !image || !base) {
  throw new Error('usage: template-child.ts HOME JOB IMAGE BASE_COMMIT');
}
const docker = createDockerClient(process.env['DOCKER_HOST']);
process.once('SIGUSR1', () => {
  let preparedMs = 0;
  createWorkspace(docker, {
    owner: { job, attempt: 1, home },
    role: 'solver',
    image,
    repoPath: '/repo',
    baseCommit: base,
    uid: 1000,
    gid: 1000,
    templates: createTemplateStore(),
    onPrepared: (ms) => (preparedMs += ms),
  }).then(
    (volume) => {
      process.stdout.write(`${JSON.stringify({ volume, preparedMs })}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
});
process.stdout.write('waiting\n');
setInterval(() => undefined, 60_000);
