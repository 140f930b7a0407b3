// A built-in runner run by hand in its image under derive's discovery (PROCTOR_DISCOVER=1), as
// the runner tests check it: no oracle, no sandbox profile, just the runner over a LIST of
// paths in the checkout and the report it writes.
import { execFileAsync } from './docker.js';

export interface DiscoverOptions {
  /** How the runner file is started: `python3 RUN` (default) or as an executable (`null`). */
  interpreter?: 'python3' | null;
  /**
   * Run as root in /repo itself (a build the image made knows /repo as its home), instead of
   * as uid 1000 with HOME=/tmp in a copy of /repo.
   */
  inPlace?: boolean;
}

/** Each reported test's status, by id, of `runner` over `paths` in a throwaway container. */
export async function discoverInImage(
  image: string,
  runner: string,
  paths: readonly string[],
  options: DiscoverOptions = {},
): Promise<Record<string, string>> {
  const start = options.inPlace ? 'cd /repo' : 'cp -r /repo /tmp/r && cd /tmp/r';
  const run = options.interpreter === null ? '/proctor-run' : 'python3 /proctor-run';
  const list = paths.map((p) => `${p}\\n`).join('');
  // The runner's exit status is not the point (a failing test fails it): the report is.
  const script =
    `${start} && printf '${list}' > /tmp/list && ` +
    `{ ${run} /tmp/list /tmp/report >/dev/null 2>&1; cat /tmp/report; }`;
  const user = options.inPlace ? [] : ['--user', '1000:1000', '--env', 'HOME=/tmp'];
  const { stdout } = await execFileAsync('docker', [
    'run',
    '--rm',
    '--network',
    'none',
    ...user,
    '--env',
    'PROCTOR_DISCOVER=1',
    '--volume',
    `${runner}:/proctor-run:ro`,
    image,
    'sh',
    '-c',
    script,
  ]);
  const report = JSON.parse(stdout) as { tests: Array<{ id: string; status: string }> };
  return Object.fromEntries(report.tests.map((t) => [t.id, t.status]));
}
