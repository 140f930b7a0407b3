// Where the codex adapter's executables are on this machine: the pinned Codex CLI's native
// binary (installed by npm as `@openai/codex-linux-x64`) and the MCP bridge codex starts,
// which sits beside this file as TypeScript under tsx (tests) or compiled JavaScript (dist).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The only Codex CLI version the adapter runs; the audit is checked against its output. */
export const CODEX_VERSION = '0.171.0';

/** The native binary (the npm launcher would only re-exec it). */
export function codexBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('@openai/codex-linux-x64/package.json'));
  return join(pkg, 'vendor/x86_64-unknown-linux-musl/bin/codex');
}

/** How codex starts the bridge: compiled JavaScript, or the TypeScript source under tsx. */
export function bridgeCommand(): { command: string; args: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    return {
      command: process.execPath,
      args: ['--import', 'tsx', join(dirname(here), 'bridge.ts')],
    };
  }
  return { command: process.execPath, args: [join(dirname(here), 'bridge.js')] };
}
