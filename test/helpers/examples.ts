// The examples/ suite for tests that sweep a copy of it.
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/**
 * The three first examples (Python, Node.js, shell). Sweeps run with --repeat copy these
 * alone: the go and rust ones would add minutes of image builds and compiles to every sweep,
 * and what such a test checks does not depend on the language.
 */
export const FIRST_EXAMPLES = ['node-version-compare', 'py-duration-parse', 'sh-country-codes'];

/** A copy of the first examples as a suite folder at `dir` (made if missing). */
export function copyFirstExamples(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const name of FIRST_EXAMPLES) {
    cpSync(join(ROOT, 'examples', name), join(dir, name), { recursive: true });
  }
  return dir;
}
