// What the benches that generate a repository share: a runner for their child processes (each
// bench kills what is still running when it is interrupted), and the step that commits the
// generated tree and builds it into an image FROM debian:bookworm-slim with git, as
// test/fixtures/images/git-repo does (the same RUN line, so the engine's cache serves it).
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type Sh = (command: string, args: string[], cwd?: string) => Promise<string>;

/** `sh` runs a command to its end (no shell) and rejects on a non-zero exit; `children` are those still running. */
export function childRunner(): { sh: Sh; children: Set<ChildProcess> } {
  const children = new Set<ChildProcess>();
  const sh: Sh = (command, args, cwd) =>
    new Promise((resolve, reject) => {
      const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        children.delete(child);
        if (code === 0) resolve(out);
        else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      });
    });
  return { sh, children };
}

/**
 * Commits everything in `context`/repo (one commit on `main`), then builds `context` into the
 * image `tag` with `label`; returns the commit.
 */
export async function commitAndBuild(
  sh: Sh,
  context: string,
  tag: string,
  label: string,
): Promise<string> {
  const repo = join(context, 'repo');
  const git = (...args: string[]) =>
    sh('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], repo);
  await git('init', '-q', '-b', 'main');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'generated');
  const commit = (await git('rev-parse', 'HEAD')).trim();
  writeFileSync(
    join(context, 'Dockerfile'),
    [
      'FROM debian:bookworm-slim',
      'RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*',
      'COPY repo /repo',
      '',
    ].join('\n'),
  );
  await sh('docker', ['build', '-q', '--network', 'host', '--label', label, '-t', tag, context]);
  return commit;
}
