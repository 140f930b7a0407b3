// `npm run lint`'s last step: the docs, benches and sources speak of the repository alone, so
// no absolute path under a home or work folder of one machine (`/home/<name>/`,
// `/Users/<name>/`, `/root/`, `/work/`) may stand in them as a place to find data or code. A
// bench that needs files outside the repository takes them as flags instead.
//
// Only those four folders are flagged: the paths a container or an image defines (`/testbed`,
// `/repo`, `/opt/...`, `/tmp/...`, `/proctor/...`) are the product's own and pass. A path
// inside a longer one (`src/work/`, `https://host/work/`, `${HOME}/work/`, `$(pwd)/work/`) is not absolute and
// passes too. A line that must name one of them (a container whose user's home is /root, say)
// carries the marker `machine-path: allowed` on the same line.
//
// Run as `tsx scripts/check-paths.ts [ROOT]`: prints file:line: text for each finding and exits
// 1 when there is any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folders and files checked, relative to the repository's root. */
export const CHECKED = ['docs', 'bench', 'src', 'README.md'] as const;

/** Never read: generated or installed trees. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git']);

/** Files larger than this are data, not prose or code: not read. */
const MAX_BYTES = 4 * 1024 * 1024;

const MACHINE_PATH = /(?<![\w.~$/})-])\/(?:home\/[\w.-]+\/|Users\/[\w.-]+\/|root\/|work\/)/;
const ALLOWED = 'machine-path: allowed';

export interface Finding {
  /** Relative to the root, with forward slashes. */
  file: string;
  line: number;
  text: string;
}

function filesUnder(path: string): string[] {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return [];
  if (stat.isFile()) return stat.size <= MAX_BYTES ? [path] : [];
  if (!stat.isDirectory()) return [];
  return readdirSync(path)
    .sort()
    .filter((name) => !SKIPPED_FOLDERS.has(name))
    .flatMap((name) => filesUnder(join(path, name)));
}

/** Every line of the checked files under `root` that names a home or work folder. */
export function findMachinePaths(root: string): Finding[] {
  const findings: Finding[] = [];
  for (const file of CHECKED.flatMap((entry) => filesUnder(join(root, entry)))) {
    const bytes = readFileSync(file);
    if (bytes.includes(0)) continue; // binary
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((text, index) => {
        if (MACHINE_PATH.test(text) && !text.includes(ALLOWED)) {
          findings.push({
            file: relative(root, file).split('\\').join('/'),
            line: index + 1,
            text: text.trim(),
          });
        }
      });
  }
  return findings;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? join(import.meta.dirname, '..');
  const findings = findMachinePaths(root);
  for (const f of findings) console.log(`${f.file}:${f.line}: ${f.text}`);
  if (findings.length > 0) {
    console.error(
      `check-paths: ${findings.length} line(s) name a folder of one machine (/home/<name>/, /Users/<name>/, /root/, /work/); pass such a path as a flag or write it relative to the repository`,
    );
    process.exitCode = 1;
  }
}
