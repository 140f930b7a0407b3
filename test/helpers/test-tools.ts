// Prepares the tools the tests need beyond npm packages with .ci/test-tools (Chromium, gVisor's
// runsc, docker-registry, iproute2, the Docker engine with runsc registered, the base image),
// so that `npm test` works on a fresh machine. No vitest APIs here, so that global-setup.ts
// can use it too.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const TEST_TOOLS_SCRIPT = fileURLToPath(new URL('../../.ci/test-tools', import.meta.url));

/**
 * Runs .ci/test-tools; returns its report (`chromium: /usr/bin/chromium`, one line a tool).
 * What it installed or started is passed on to stderr; a failure throws its one-line reason.
 */
export function prepareTestTools(env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync('bash', [TEST_TOOLS_SCRIPT], {
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status === 0) {
    if (result.stderr !== '') process.stderr.write(result.stderr);
    return result.stdout;
  }
  const lines = (result.stderr ?? '').split('\n').filter((line) => line.trim() !== '');
  const reason =
    lines.findLast((line) => line.startsWith('test-tools: ')) ??
    lines.at(-1) ??
    result.error?.message ??
    `exit status ${result.status}`;
  const failure = new Error(
    `the tests' tools could not be prepared (.ci/test-tools): ${reason.replace(/^test-tools: /, '')}`,
  );
  // The reason is the whole story: no stack of this helper under it.
  failure.stack = `Error: ${failure.message}`;
  throw failure;
}
