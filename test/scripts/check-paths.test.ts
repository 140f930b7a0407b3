// scripts/check-paths.ts, `npm run lint`'s check that docs, benches and sources name no folder
// of one machine: a planted path in a temporary tree is found with its file and line (and the
// script exits 1 printing file:line), container paths and relative ones pass, and a clean tree
// passes (exit 0); the repository itself is clean.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findMachinePaths } from '../../scripts/check-paths.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

function tree(files: Record<string, string | Buffer>): string {
  const root = tempDir('proctor-check-paths-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Lines every tree below carries: paths of containers and images, and relative ones. */
const CLEAN = {
  'README.md': '# x\n\nThe work tree is `/testbed` in the image; see src/work/ and ~/work/x.\n',
  'docs/a.md': 'Files in `/repo`, `/opt/venv/bin`, `/tmp/x`, `/proctor/tests/run`.\n',
  'src/a.ts': "const url = 'https://example.com/work/x';\nconst home = `${HOME}/work/`;\n",
  'bench/b.ts': "// /home and /root alone name no folder's content\nconst x = '$HOME/root/';\n",
  // Outside the checked folders: never read.
  'test/t.ts': "const planted = '/work/rows/x.jsonl';\n",
  'examples/e/README.md': 'ellipsis("/home/ana/src/app/main.go")\n',
};

describe('check-paths', () => {
  it('finds a path under a home or work folder in docs, bench, src and README.md, with its file and line', () => {
    const root = tree({
      ...CLEAN,
      'README.md': `${CLEAN['README.md']}rows in /work/rows/sympy.jsonl\n`,
      'docs/deep/b.md': 'one\ntwo\n  --repos /home/ana/rows/repos \\\n',
      'src/x/y.ts': "const a = 1;\nexport const DIR = '/root/data';\n",
      'bench/c.ts': 'default: "/Users/bob/rows"\n',
      'src/blob.bin': Buffer.from([0, 1, 2, 0x2f, 0x77, 0x6f, 0x72, 0x6b, 0x2f]),
    });
    expect(findMachinePaths(root)).toEqual([
      { file: 'docs/deep/b.md', line: 3, text: '--repos /home/ana/rows/repos \\' },
      { file: 'bench/c.ts', line: 1, text: 'default: "/Users/bob/rows"' },
      { file: 'src/x/y.ts', line: 2, text: "export const DIR = '/root/data';" },
      { file: 'README.md', line: 4, text: 'rows in /work/rows/sympy.jsonl' },
    ]);
  });

  it('passes a line that carries the marker, and a clean tree', () => {
    expect(findMachinePaths(tree(CLEAN))).toEqual([]);
    const marked = tree({ 'src/a.ts': "const HOME = '/root/'; // machine-path: allowed\n" });
    expect(findMachinePaths(marked)).toEqual([]);
  });

  it('prints file:line for each finding and exits 1; exits 0 on a clean tree', async () => {
    const dirty = tree({ ...CLEAN, 'docs/a.md': 'x\ndata in `/work/rows`\n' });
    const failed = spawnTs('scripts/check-paths.ts', [dirty]);
    expect((await failed.exited).code).toBe(1);
    expect(failed.stdout()).toBe('docs/a.md:2: data in `/work/rows`\n');
    expect(failed.stderr()).toMatch(/^check-paths: 1 line\(s\) name a folder of one machine/);
    const clean = spawnTs('scripts/check-paths.ts', [tree(CLEAN)]);
    expect((await clean.exited).code).toBe(0);
    expect(clean.stdout()).toBe('');
  });

  it('finds nothing in the repository itself', () => {
    expect(findMachinePaths(ROOT)).toEqual([]);
  });
});
