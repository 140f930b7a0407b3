// Where Proctor's own files are (migrations, the page, the runners), whether this module runs
// as TypeScript under tsx (src/), compiled by tsc (dist/) or bundled for the bin
// (dist/bundle/, one folder of chunks): the project root is the nearest folder above this file
// whose package.json names the package, found once at load.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'proctor';

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
      };
      if (manifest.name === PACKAGE_NAME) return dir;
    } catch {
      // No package.json here, or not ours: keep walking up.
    }
    if (dirname(dir) === dir) {
      throw new Error(`proctor: no package.json named "${PACKAGE_NAME}" above ${start}`);
    }
  }
}

/** The folder holding package.json, drizzle/, src/ and bin/. */
export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the project, e.g. `projectPath('drizzle')`. */
export const projectPath = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);
