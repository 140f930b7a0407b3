// How Proctor words what zod and the TOML parser found wrong: one formatter each, so that
// proctor.toml, task.toml, job payloads, HTTP bodies, tool arguments and reports all name the
// key at fault the same way (`grading.deny[1]`, `limits.memory`).
import { TomlError } from 'smol-toml';

interface ZodIssueLike {
  path: PropertyKey[];
  message: string;
  code: string;
  keys?: string[];
  issues?: ReadonlyArray<{ message: string }>;
}

/** One thing wrong: the dotted key at fault ('' for the value itself) and what is wrong. */
export interface Problem {
  key: string;
  message: string;
}

/** A zod path as a key: `environment.workdir`, `grading.deny[1]`. */
export function keyOf(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

const joinKey = (parent: string, name: string) =>
  parent === '' ? name : name === '' ? parent : `${parent}.${name}`;

/** Every problem zod found, in its order; each unknown key is a problem of its own. */
export function zodProblems(error: { issues: ReadonlyArray<ZodIssueLike> }): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    const key = keyOf(issue.path);
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const name of issue.keys)
        problems.push({ key: joinKey(key, name), message: 'unknown key' });
    } else if (issue.code === 'invalid_key' && issue.issues) {
      problems.push({ key, message: issue.issues.map((inner) => inner.message).join('; ') });
    } else problems.push({ key, message: issue.message });
  }
  return problems;
}

/**
 * The first problem zod found under `root`: `path` (`root.key`, or for an unknown key its
 * parent, the way a reader looks for it) and `detail` (`unknown key \`name\`` for that case).
 */
export function zodProblem(
  error: { issues: ReadonlyArray<ZodIssueLike> },
  root: string,
): { path: string; detail: string } {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys' && issue.keys) {
    const path = joinKey(root, keyOf(issue.path));
    const detail = `unknown key ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
    return { path, detail };
  }
  const first = zodProblems(error)[0] ?? { key: '', message: 'invalid' };
  const path =
    first.key.startsWith('[') || root === '' ? `${root}${first.key}` : joinKey(root, first.key);
  return { path, detail: first.message };
}

/** A TOML parse failure as one line: `line L, column C: what`. */
export function tomlProblem(error: unknown): string {
  const where = error instanceof TomlError ? `line ${error.line}, column ${error.column}: ` : '';
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
  return `${where}${message}`;
}
