// Builds dist/ once before the tests, so that CLI tests run the real `bin/proctor.js`
// against the current sources, never a stale build. After the run, removes the workspace
// templates of the test homes (temp dirs and /proctor-tests…): they carry no job label, so
// no test's own cleanup takes them, and a temp home is never used again.
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDockerClient } from '../../src/sandbox/docker.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { removeTemplate } from '../../src/sandbox/template.js';

export default function setup(): () => Promise<void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  return async () => {
    const docker = createDockerClient(process.env['DOCKER_HOST']);
    const { Volumes } = await docker.listVolumes({ filters: { label: [LABEL.template] } });
    for (const volume of Volumes ?? []) {
      const home = volume.Labels?.[LABEL.home] ?? '';
      if (!home.startsWith('/proctor-tests') && !home.startsWith(tmpdir())) continue;
      // One in use (a test run of another checkout) is left: removeTemplate answers false.
      await removeTemplate(docker, volume.Name).catch(() => false);
    }
  };
}
