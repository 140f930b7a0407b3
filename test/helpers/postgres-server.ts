// Starts the tests' throw-away PostgreSQL cluster with .ci/postgres (no vitest APIs here, so
// that global-setup.ts can use it too).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../.ci/postgres', import.meta.url));

/** Starts (or finds) the test cluster; returns its URL. */
export function startTestPostgres(): string {
  try {
    return execFileSync('bash', [SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .trim()
      .split('\n')
      .at(-1) as string;
  } catch (error) {
    const raw = (error as { stderr?: string | Buffer }).stderr;
    const stderr = (raw === undefined ? '' : raw.toString()).trim();
    throw new Error(
      `PostgreSQL is required by these tests and could not be started by .ci/postgres: ${stderr || String(error)}`,
    );
  }
}
