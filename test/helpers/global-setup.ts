// Builds dist/ once before the tests, so that CLI tests run the real `bin/proctor.js`
// against the current sources, never a stale build; and starts the throw-away PostgreSQL
// cluster (.ci/postgres) unless PROCTOR_TEST_PG_URL already names one, so that `npm test`
// alone works as well as `.ci/run`. The URL reaches the test workers through the environment.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestPostgres } from './postgres-server.js';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  process.env.PROCTOR_TEST_PG_URL ||= startTestPostgres();
}
