// npm run bench:context — deciding that a Dockerfile image is current on a large, unchanged
// build context (target: a second job on a 300 MB context decides in < 100 ms).
//
// Generates a context of --files files (--mb MB in all, random bytes, 40 folders) in a temp
// dir, with a Dockerfile that copies only itself (the daemon still receives the whole
// context, as a real build does), then times, through the worker's image cache:
//   first resolve   a fresh cache folder: the full hash and the build;
//   second resolve  a new image cache (as a new process) over the same records: the stat check;
//   third resolve   the same cache again (the in-process path);
// and the stat check alone (the context cache's state(), no Docker call).
// beside two raw baselines: `find DIR -printf '%s %T@ %i\n' > /dev/null` (the stat floor) and
// hashing every file once with SHA-256. Waits out the racy-clean window (2 s) before the first
// resolve, as any context older than 2 s would. Removes its files and its image.
// The quick figures are medians of --runs (the machine is shared and noisy).
// Usage: npm run bench:context [-- --files 2000 --mb 300 --runs 5]
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  createContextCache,
  createDockerClient,
  RACY_MS,
  requireDocker,
} from '../src/sandbox/index.js';
import { createImageCache } from '../src/workers/index.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    mb: { type: 'string', default: '300' },
    runs: { type: 'string', default: '5' },
  },
});
const RUNS = Number(values.runs);
const FILES = Number(values.files);
const BYTES = Number(values.mb) * 1024 * 1024;

const docker = createDockerClient(process.env['DOCKER_HOST']);
await requireDocker(docker, process.env['DOCKER_HOST'] ?? '/var/run/docker.sock');

const root = mkdtempSync(join(tmpdir(), 'proctor-bench-context-'));
const context = join(root, 'environment');
const cacheDir = join(root, 'cache');
let imageId: string | undefined;

const timed = async <T>(fn: () => Promise<T> | T): Promise<[T, number]> => {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
};
const median = async (fn: () => unknown): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push((await timed(fn))[1]);
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`;

try {
  const per = Math.floor(BYTES / FILES);
  for (let i = 0; i < FILES; i++) {
    const dir = join(context, `pkg${i % 40}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.bin`), randomBytes(per));
  }
  writeFileSync(
    join(context, 'Dockerfile'),
    `FROM scratch\n# ${randomUUID()}\nCOPY Dockerfile /\n`,
  );
  console.log(
    `context: ${FILES + 1} files, ${((per * FILES) / 1048576).toFixed(0)} MB in ${context}`,
  );
  await sleep(RACY_MS + 200); // out of the racy-clean window, as an untouched context is

  const findMs = await median(() =>
    execFileSync('sh', ['-c', `find "$1" -printf '%s %T@ %i\\n' > /dev/null`, 'sh', context]),
  );
  const [, hashMs] = await timed(async () => {
    const hash = createHash('sha256');
    const names = (await readdir(context, { recursive: true })).sort();
    for (const name of names) {
      if (!name.endsWith('.bin') && name !== 'Dockerfile') continue;
      for await (const chunk of createReadStream(join(context, name))) hash.update(chunk as Buffer);
    }
    return hash.digest('hex');
  });

  let hashes = 0;
  const cache = () => createImageCache(docker, { dir: cacheDir, onHash: () => (hashes += 1) });
  const bundle = {
    id: 'bench-context',
    contentHash: '0'.repeat(64),
    environment: { kind: 'dockerfile' as const, contextDir: context, dockerfile: 'Dockerfile' },
  };
  const [first, firstMs] = await timed(() => cache().resolve(bundle));
  imageId = first.localId;
  const afterFirst = hashes;
  const secondMs = await median(async () => {
    const second = await cache().resolve(bundle);
    if (second.localId !== first.localId) throw new Error('the second resolve built another image');
  });
  const records = createContextCache({ dir: cacheDir, onHash: () => (hashes += 1) });
  const statMs = await median(() => records.state(context));
  const warm = cache();
  await warm.resolve(bundle);
  const thirdMs = await median(() => warm.resolve(bundle));
  if (afterFirst !== 1 || hashes !== 1) throw new Error(`the context was hashed ${hashes} times`);

  console.log(`baseline find -printf:          ${ms(findMs)}`);
  console.log(`baseline SHA-256 of every file: ${ms(hashMs)}`);
  console.log(`first resolve (hash + build):   ${ms(firstMs)}`);
  console.log(
    `second resolve (stat check):    ${ms(secondMs)}  ` +
      `(${(secondMs / findMs).toFixed(1)}x find, ${(hashMs / secondMs).toFixed(0)}x faster than hashing, ` +
      `${(firstMs / secondMs).toFixed(0)}x faster than the first; target < 100 ms: ${secondMs < 100 ? 'met' : 'MISSED'})`,
  );
  console.log(
    `  of which the stat check alone: ${ms(statMs)} (the rest: the image record and one inspect)`,
  );
  console.log(`third resolve (same process):   ${ms(thirdMs)}`);
  console.log(`full hashes of the context: ${hashes} (the first resolve's only)`);
} finally {
  if (imageId) {
    await docker
      .getImage(imageId)
      .remove({ force: true })
      .catch(() => undefined);
  }
  rmSync(root, { recursive: true, force: true });
}
