// A piece of the forgeries that aim at the tests git tracks (the hidden test files are tracked
// in the work tree's repository, a file of sentinels of its own is not): `tracked(file)` asks
// git, once per file, whether the file is tracked. The rest of each forgery is its runner's.

/** The JavaScript source of `tracked(file)` and its imports, as CommonJS or as an ES module. */
export function trackedHelper(module: 'cjs' | 'esm'): string {
  const imports =
    module === 'cjs'
      ? `const { execFileSync } = require('node:child_process');
const { dirname } = require('node:path');`
      : `import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';`;
  return `${imports}
const seen = new Map();
const tracked = (file) => {
  if (!seen.has(file)) {
    let yes = true;
    try {
      execFileSync('git', ['-c', 'safe.directory=*', 'ls-files', '--error-unmatch', '--', file], { cwd: dirname(file), stdio: 'ignore' });
    } catch {
      yes = false;
    }
    seen.set(file, yes);
  }
  return seen.get(file);
};
`;
}
