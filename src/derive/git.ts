// Git on the host, for reading the author's repository: no system or global config, no
// hooks, pager, external diff or textconv, so that the bytes derive reads are git's own.
// The repository is only read; the one commit derive makes (the snapshot) is written into
// a temporary repository that borrows the objects through `alternates`.
import { execFile } from 'node:child_process';
import { ProctorError } from '../errors.js';

/** Most bytes one git command may print (a diff, a pack): a bound, not an expected size. */
export const MAX_GIT_OUTPUT = 512 * 1024 * 1024;

const CLEAN_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  LC_ALL: 'C',
};

export interface GitOptions {
  /** Extra environment (identity and dates of a commit). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Runs `git ARGS` in `cwd`; its stdout as bytes, or a ProctorError with git's last words. */
export function git(cwd: string, args: string[], options: GitOptions = {}): Promise<Buffer> {
  const env: Record<string, string> = { ...CLEAN_ENV, ...options.env };
  if (process.env['PATH'] !== undefined) env['PATH'] = process.env['PATH'];
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'core.hooksPath=/dev/null', '-c', 'safe.directory=*', ...args],
      {
        cwd,
        env,
        encoding: 'buffer',
        maxBuffer: MAX_GIT_OUTPUT,
        timeout: options.timeoutMs ?? 300_000,
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        const said = stderr.toString('utf8').trim().split('\n').slice(-3).join('; ');
        reject(
          new ProctorError('USAGE', `git ${args[0] ?? ''} in ${cwd}: ${said || error.message}`, {
            cause: error,
          }),
        );
      },
    );
  });
}

export const gitText = async (cwd: string, args: string[], options?: GitOptions) =>
  (await git(cwd, args, options)).toString('utf8').trim();

/** The full id of `rev` as a commit, or a USAGE error naming the option it came from. */
export async function resolveCommit(repo: string, rev: string, option: string): Promise<string> {
  try {
    return await gitText(repo, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`]);
  } catch {
    throw new ProctorError('USAGE', `${option} ${rev}: no such commit in ${repo}`);
  }
}

/** The parents of a commit, in order. */
export async function parentsOf(repo: string, commit: string): Promise<string[]> {
  const line = await gitText(repo, ['rev-list', '--parents', '-n', '1', commit]);
  return line.split(' ').slice(1);
}

/** The git directory of a work tree or a bare repository, as an absolute path. */
export async function gitDirOf(repo: string): Promise<string> {
  try {
    return await gitText(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  } catch {
    throw new ProctorError('USAGE', `--repo ${repo}: not a git repository`);
  }
}

/** Every commit reachable from a ref of `repo` whose only parent is `parent`. */
export async function childrenOf(repo: string, parent: string): Promise<string[]> {
  const text = await gitText(repo, ['rev-list', '--all', '--parents']);
  const children = new Set<string>();
  for (const line of text.split('\n')) {
    const [commit, ...parents] = line.split(' ');
    if (commit !== undefined && parents.length === 1 && parents[0] === parent) children.add(commit);
  }
  return [...children].sort();
}
