// A PATH without some programs, for testing the set-up scripts' "missing" branches without
// uninstalling anything from the machine: one folder of links to every other program on PATH,
// and an `apt-get` standing in for Debian's that logs its arguments.
import { chmodSync, existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { tempDir } from './temp.js';

/**
 * A PATH of one folder holding links to every program of this PATH except `without`, and an
 * `apt-get` that logs its arguments to `apt.log` there and then runs `aptBody` (sh, with the
 * folder as $BIN).
 */
export function pathWithout(without: string[], aptBody: string): { bin: string; path: string } {
  const bin = tempDir('proctor-path-');
  const skip = new Set([...without, 'apt-get']);
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || !existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (skip.has(name) || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  writeFileSync(
    join(bin, 'apt-get'),
    `#!/bin/sh\nBIN=${JSON.stringify(bin)}\necho "$*" >> "$BIN/apt.log"\n${aptBody}\n`,
  );
  chmodSync(join(bin, 'apt-get'), 0o755);
  return { bin, path: bin };
}
