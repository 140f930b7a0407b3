// Prepares the tools the tests need beyond npm packages with .ci/test-tools (Chromium, gVisor's
// runsc, docker-registry, iproute2, the Docker engine with runsc registered, the base image),
// so that `npm test` works on a fresh machine. No vitest APIs here, so that global-setup.ts
// can use it too.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const TEST_TOOLS_SCRIPT = fileURLToPath(new URL('../../.ci/test-tools', import.meta.url));

/**
 * Runs .ci/test-tools; returns its report (`chromium: /usr/bin/chromium`, one line a tool).
 * Its progress (installs) shows on stderr as it happens; a failure throws its one-line reason.
 */
export function prepareTestTools(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync('bash', [TEST_TOOLS_SCRIPT], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const raw = (error as { stderr?: string | Buffer }).stderr;
    const lines = (raw === undefined ? '' : raw.toString()).trim().split('\n');
    const reason = lines.findLast((line) => line.startsWith('test-tools: ')) ?? lines.at(-1);
    throw new Error(
      `the tests' tools could not be prepared (.ci/test-tools): ${reason?.replace(/^test-tools: /, '') || String(error)}`,
    );
  }
}
