// The built-in runners a bundle can be given (`--runner pytest|node`). They are written by
// src/runners (issue 12, part 2); until that lands, only an author's own runner file works.
import { ProctorError } from '../errors.js';

export const BUILTIN_RUNNER_NAMES = ['pytest', 'node'] as const;
export type BuiltinRunnerName = (typeof BUILTIN_RUNNER_NAMES)[number];

export const isBuiltinRunner = (name: string): name is BuiltinRunnerName =>
  (BUILTIN_RUNNER_NAMES as readonly string[]).includes(name);

/** Writes tests/run (and its support files) of a built-in runner into `testsDir`. */
export function installBuiltinRunner(name: BuiltinRunnerName, testsDir: string): Promise<string[]> {
  void testsDir;
  return Promise.reject(
    new ProctorError(
      'USAGE',
      `--runner ${name}: the built-in runners are not in this build yet; pass --runner FILE`,
    ),
  );
}
