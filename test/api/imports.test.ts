// The wall between the API and Docker, read from the sources: no module under src/api/ imports
// anything under src/sandbox/ (not even a type) or the Docker client library. The API enqueues
// and reads; whatever needs an engine runs in the worker pool.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const API = join(ROOT, 'src/api');
const SANDBOX = join(ROOT, 'src/sandbox');

/**
 * Every module specifier a source names: static imports and re-exports (types included, and
 * across line breaks), side-effect imports, dynamic import() and require().
 */
function specifiers(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
    /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1] ?? ''));
}

/** Why `specifier`, named by `file`, crosses the wall; undefined when it does not. */
function crossing(file: string, specifier: string): string | undefined {
  if (specifier === 'dockerode' || specifier.startsWith('dockerode/')) return 'the Docker client';
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(file), specifier);
  return target === SANDBOX || target.startsWith(SANDBOX + sep) ? 'src/sandbox/' : undefined;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(?:ts|js|mjs|cjs)$/.test(name))
    .map((name) => join(dir, name));
}

function violations(files: string[], read: (file: string) => string): string[] {
  return files.flatMap((file) =>
    specifiers(read(file)).flatMap((specifier) => {
      const why = crossing(file, specifier);
      return why ? [`${relative(ROOT, file)} imports ${specifier} (${why})`] : [];
    }),
  );
}

describe('the API and Docker', () => {
  it('no module under src/api/ imports src/sandbox/ or the Docker client', () => {
    const files = sources(API);
    expect(files.map((f) => relative(ROOT, f))).toEqual(
      expect.arrayContaining(['src/api/app.ts', 'src/api/schemas.ts', 'src/api/page/app.js']),
    );
    expect(violations(files, (file) => readFileSync(file, 'utf8'))).toEqual([]);
  });

  it('finds every form of import that would cross the wall', () => {
    const file = join(API, 'example.ts');
    const forms = {
      value: "import { resolveImage } from '../sandbox/index.js';",
      type: "import type { DockerClient } from '../sandbox/index.js';",
      inlineType: "import { type Owner } from '../sandbox/labels.js';",
      multiline:
        "import {\n  createDockerClient,\n  type DockerClient,\n} from '../sandbox/docker.js';",
      reexport: "export type { ResolvedImage } from '../sandbox/image.js';",
      star: "export * from '../sandbox';",
      sideEffect: "import '../sandbox/index.js';",
      dynamic: "const m = await import('../sandbox/index.js');",
      client: "import Docker from 'dockerode';",
      nested: "import { x } from './page/../../sandbox/run.js';",
    };
    for (const [form, source] of Object.entries(forms)) {
      expect(
        violations([file], () => source),
        form,
      ).toHaveLength(1);
    }
    const fine = [
      "import { loadBundle } from '../oracle/index.js';",
      "import { z } from 'zod';",
      "// import { resolveImage } from '../sandbox/index.js';",
      "import { sandboxed } from './sandboxed.js';",
    ].join('\n');
    expect(violations([file], () => fine)).toEqual([]);
  });
});
