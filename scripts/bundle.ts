// `npm run build`'s second step: the bin's bundle. Start-up is paid by every command, and most
// of a short command's time went to node's ESM loader resolving, reading and compiling the
// hundreds of small files of drizzle-orm, zod, commander and dist/ itself. esbuild joins them
// into a few chunks in dist/bundle/ (code splitting keeps every command's lazy import lazy:
// `--help` and `status` still never load Docker, HTTP or the model clients), which
// bin/proctor.js runs. dist/ (tsc's output) stays what tests and library users import.
//
// Kept out of the bundle: native add-ons and the packages that locate files of their own at
// run time. The MCP bridge is a second entry point, because codex starts it as its own process
// from the file beside the adapter (src/solvers/codex/binary.ts).
// dist/bundle/meta.json maps every chunk to its inputs (test/cli/startup.test.ts reads it).
// Run as `tsx scripts/bundle.ts` by `npm run build`; test/helpers/global-setup.ts calls
// bundleBin() after its own tsc.
import { build, type Plugin } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist', 'bundle');

/** Loaded with node's own resolution from node_modules, never inlined. */
const EXTERNAL = [
  'better-sqlite3', // native add-on
  'pg', // optional native pg-native
  'pg-native',
  'dockerode', // ssh2 and cpu-features, native and optional
  '@openai/codex', // resolved as a package by codexBinary()
  '@openai/codex-linux-x64',
];

/**
 * zod's `z` carries every locale's error messages (`z.locales`, about 360 KB of the 750 KB zod
 * puts in the bundle); Proctor speaks English only and never reads z.locales, so the bundle's
 * locale index holds `en` alone (zod configures `en` itself on load).
 */
const englishOnlyZod: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    // zod/v4/core, /classic and /mini each re-export the index as `locales`.
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](core|classic|mini)[\\/][^\\/]+\.js$/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-en' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`,
      resolveDir: dirname(args.path),
    }));
  },
};

/** Writes dist/bundle/ from tsc's dist/ (which must be current). */
export async function bundleBin(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'dist/cli/main.js', bridge: 'dist/solvers/codex/bridge.js' },
    outdir: OUT,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS packages call require(); ESM output has none, so give them node's.
    banner: {
      js: "import { createRequire as __proctorCreateRequire } from 'node:module';\nconst require = __proctorCreateRequire(import.meta.url);",
    },
    chunkNames: 'chunk-[hash]',
    metafile: true,
    plugins: [englishOnlyZod],
    logLevel: 'warning',
  });
  writeFileSync(join(OUT, 'meta.json'), JSON.stringify(result.metafile));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleBin();
}
