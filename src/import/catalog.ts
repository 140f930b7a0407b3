// The environment catalog: environments/<owner>__<name>/<version>/ in this repository, a build
// context per SWE-bench repository and version (a Dockerfile, its install.sh, and the files it
// copies), each following SWE-bench's spec for that version as far as Debian's Pythons allow
// (environments/README.md says what each covers and how it differs). `proctor import swebench`
// takes a row's environment from here when --environment is not given: the row's own version
// folder only, never another version's or a shared one, since SWE-bench pins Python and
// packages per version.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../paths.js';
import type { SwebenchRow } from './rows.js';

/** The catalog this checkout carries. */
export const CATALOG_DIR = projectPath('environments');

const isVersion = (name: string) =>
  name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);

/** The versions the catalog has an environment for, for one repository, sorted as numbers. */
export function catalogVersions(catalog: string, repo: string): string[] {
  const dir = join(catalog, repo.replace('/', '__'));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir)
    .filter((v) => existsSync(join(dir, v, 'Dockerfile')))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/**
 * The catalog's build context of a row, `CATALOG/<owner>__<name>/<version>/`, or one line
 * saying what the catalog has and what to pass instead.
 */
export function catalogEnvironment(
  catalog: string,
  row: Pick<SwebenchRow, 'repo' | 'version'>,
): { context: string } | { reason: string } {
  const folder = row.repo.replace('/', '__');
  const versions = catalogVersions(catalog, row.repo);
  const instead = `pass --environment DIR (with DIR/${folder}/<version>/Dockerfile) or --images swebench`;
  if (row.version === undefined || !isVersion(row.version)) {
    return {
      reason: `the row has no version, which the environment catalog needs: ${instead}`,
    };
  }
  const context = join(catalog, folder, row.version);
  if (versions.includes(row.version)) return { context };
  const has =
    versions.length === 0
      ? `no environment for ${row.repo}`
      : `no environment for ${row.repo} ${row.version} (it has ${versions.join(', ')})`;
  return { reason: `the environment catalog has ${has}: ${instead}` };
}
