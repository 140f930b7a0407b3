// Start-up is paid by every command: main.ts loads each command's module only when its action
// runs. These tests record every module the real bin resolves (an ESM loader hook
// given to node with --import) and fail if `--help` or `status` loads what they do not use, so
// that a later static import cannot silently undo the laziness. The bin runs the bundle
// (scripts/bundle.ts): each chunk it loads stands for the modules esbuild put in it, read from
// dist/bundle/meta.json. Timing is bench:startup's.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openSqliteJobStore } from '../../src/queue/index.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

// The hooks run on node's loader thread; each resolved URL is appended to the named file.
const HOOKS = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, result.url + '\\n');
  return result;
}
`;

/** Runs `node bin/proctor.js ARGS`; returns its exit code and every module URL it resolved. */
async function loadedModules(args: string[]): Promise<{ code: number | null; urls: string[] }> {
  const dir = tempDir('proctor-startup-');
  const hooks = join(dir, 'hooks.mjs');
  const register = join(dir, 'register.mjs');
  const record = join(dir, 'modules.txt');
  writeFileSync(hooks, HOOKS);
  writeFileSync(record, '');
  writeFileSync(
    register,
    `import { register } from 'node:module';\n` +
      `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { file: ${JSON.stringify(record)} } });\n`,
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(register).href, join(ROOT, 'bin', 'proctor.js'), ...args],
      { cwd: ROOT, env: { ...process.env, PROCTOR_HOME: undefined }, stdio: 'ignore' },
    );
    child.on('error', reject);
    child.on('exit', resolve);
  });
  const urls = readFileSync(record, 'utf8').split('\n').filter(Boolean);
  return { code, urls: urls.flatMap(bundled) };
}

const BUNDLE = pathToFileURL(join(ROOT, 'dist', 'bundle')).href + '/';
let chunks: Map<string, string[]> | undefined;

/** A bundle chunk's URL as the URLs of its inputs (and itself); any other URL as it is. */
function bundled(url: string): string[] {
  if (!url.startsWith(BUNDLE)) return [url];
  if (!chunks) {
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    chunks = new Map(
      Object.entries(meta.outputs).map(([output, { inputs }]) => [
        pathToFileURL(resolve(ROOT, output)).href,
        Object.keys(inputs).map((input) => pathToFileURL(resolve(ROOT, input)).href),
      ]),
    );
  }
  const inputs = chunks.get(url);
  if (!inputs) throw new Error(`${url} is not in dist/bundle/meta.json: rebuild (npm run build)`);
  return [url, ...inputs];
}

/** The loaded modules of a package under node_modules, or of an area of dist/. */
const pkg = (name: string) => `/node_modules/${name}/`;
const area = (name: string) => pathToFileURL(join(ROOT, 'dist', name)).href + '/';
const HEAVY = [
  pkg('dockerode'),
  pkg('hono'),
  pkg('@hono/node-server'),
  pkg('openai'),
  pkg('@modelcontextprotocol/sdk'),
  pkg('fast-xml-parser'),
  pkg('tar-stream'),
  pkg('p-queue'),
  pkg('pg'),
  // The PostgreSQL stores (jobs, artifacts) load on their first call, and only for a database URL.
  pathToFileURL(join(ROOT, 'dist/queue/pg/store.js')).href,
  pathToFileURL(join(ROOT, 'dist/queue/pg/artifacts.js')).href,
  area('sandbox'),
  area('oracle'),
  area('solvers'),
  area('workers'),
  area('api'),
];
const within = (urls: string[], prefixes: string[]) =>
  urls.filter((url) => prefixes.some((prefix) => url.includes(prefix)));

describe('start-up loads only what the command uses', () => {
  it('status on an empty home loads no Docker, HTTP, model client, MCP, oracle or solver module, nor the store', async () => {
    const { code, urls } = await loadedModules(['--home', tempDir(), 'status']);
    expect(code).toBe(0);
    // The bin runs the bundle.
    expect(urls.filter((url) => url.startsWith(BUNDLE))).not.toEqual([]);
    // The recorder works: the command's own module is in the list.
    expect(urls).toContain(pathToFileURL(join(ROOT, 'dist/cli/status.js')).href);
    // No database yet: nothing to read, so neither drizzle nor the driver (status-empty.test.ts).
    expect(within(urls, [...HEAVY, pkg('better-sqlite3'), pkg('drizzle-orm')])).toEqual([]);
  });

  it('status on a home with a database loads the store, and still no Docker, HTTP or model client', async () => {
    const home = tempDir();
    await openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock }).close();
    const { code, urls } = await loadedModules(['--home', home, 'status']);
    expect(code).toBe(0);
    expect(within(urls, [pkg('better-sqlite3')])).not.toEqual([]);
    expect(within(urls, HEAVY)).toEqual([]);
  });

  it('--help loads no command module, no config and no database', async () => {
    const { code, urls } = await loadedModules(['--help']);
    expect(code).toBe(0);
    expect(urls).toContain(pathToFileURL(join(ROOT, 'dist/cli/main.js')).href);
    const commands = ['validate', 'status', 'cancel', 'baseline', 'grade', 'solve', 'serve']
      .concat(['worker', 'context', 'bundles', 'wait'])
      .map((name) => pathToFileURL(join(ROOT, 'dist/cli', `${name}.js`)).href);
    expect(within(urls, commands)).toEqual([]);
    const heavier = [
      ...HEAVY,
      pkg('zod'),
      pkg('smol-toml'),
      pkg('drizzle-orm'),
      pkg('better-sqlite3'),
    ];
    expect(within(urls, heavier)).toEqual([]);
  });
});
