// The debug export of jobs: each job's row with its payload and result (and a
// grade's or baseline's per-test statuses, tests.json, when stored), every
// artifact it registered (oracle log, transcript, candidate) and the candidate it was handed,
// its bundle's task.toml and description.md, and MANIFEST.sha256 over all of it — every byte
// through the redactor. Hidden tests, the runner and the ID lists only when asked for, since
// an export is for sharing and they are what a solver must never see.
import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProctorError } from '../errors.js';
import type { Job, JobStore, RegisteredArtifact } from '../queue/store.js';
import { redactDocument, type ArtifactStore, type Redactor } from '../store/index.js';
import { reproducibleTarGz, type ArchiveEntry } from './archive.js';
import { payloadOf } from './stored.js';
import { expandTestStatuses, readTestStatuses, summariseTestStatuses } from './test-statuses.js';

/** Most jobs one export takes (a batch of more is refused, not cut). */
export const MAX_EXPORT_JOBS = 2_000;
/** Most bytes of content one export gathers before compression. */
export const MAX_EXPORT_BYTES = 512 * 1024 * 1024;
/** Largest bundle file copied (task.toml and description.md are far smaller). */
const MAX_BUNDLE_FILE_BYTES = 16 * 1024 * 1024;

const PUBLIC_FILES = ['task.toml', 'description.md'];
const HIDDEN_FILES = ['tests/hidden.patch', 'tests/existing.txt', 'tests/hidden.txt', 'tests/run'];

export interface ExportDeps {
  store: JobStore;
  artifacts: ArtifactStore;
  redactor: Redactor;
}

export interface ExportOptions {
  includeHidden?: boolean;
}

export interface ExportResult {
  archive: Buffer;
  jobs: number;
  files: number;
}

const safe = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200) || '_';

async function bundleFile(dir: string, rel: string): Promise<Buffer | null> {
  const path = join(dir, rel);
  // Bundles never hold symlinks that leave them; an export follows none at all.
  const stats = await lstat(path).catch(() => null);
  if (!stats?.isFile() || stats.size > MAX_BUNDLE_FILE_BYTES) return null;
  return readFile(path);
}

export async function exportJobs(
  deps: ExportDeps,
  jobs: readonly Job[],
  options: ExportOptions = {},
): Promise<ExportResult> {
  if (jobs.length > MAX_EXPORT_JOBS) {
    throw new ProctorError(
      'LIMIT_EXCEEDED',
      `an export takes at most ${MAX_EXPORT_JOBS} jobs, got ${jobs.length}`,
    );
  }
  const { redactor } = deps;
  const entries: ArchiveEntry[] = [];
  let total = 0;
  const add = (path: string, bytes: Buffer) => {
    total += bytes.length;
    if (total > MAX_EXPORT_BYTES) {
      throw new ProctorError(
        'LIMIT_EXCEEDED',
        `the export would exceed ${MAX_EXPORT_BYTES} bytes; export fewer jobs`,
      );
    }
    entries.push({ path, bytes });
  };
  const text = (mediaType: string, bytes: Buffer) =>
    Buffer.from(redactDocument(redactor, mediaType, bytes));
  const json = (value: unknown) =>
    Buffer.from(`${JSON.stringify(redactor.value(value), null, 2)}\n`);

  const bundles = new Map<string, string>();
  for (const job of [...jobs].sort((a, b) => a.id - b.id)) {
    const folder = `jobs/${job.id}`;
    add(`${folder}/job.json`, json(job));
    // A grade's or baseline's every declared test, when it has them stored.
    const doc = (await readTestStatuses(deps.store, [job.id])).get(job.id);
    if (doc !== undefined) {
      add(
        `${folder}/tests.json`,
        json({ summary: summariseTestStatuses(doc), tests: expandTestStatuses(doc) }),
      );
    }
    const registered: RegisteredArtifact[] = await deps.store.listArtifacts(job.id);
    const payload = payloadOf(job.payload);
    if (payload.candidate !== undefined) {
      const input = await deps.store.getArtifact(payload.candidate);
      if (input) registered.push(input);
    }
    for (const artifact of registered) {
      const bytes = await deps.artifacts.read(artifact, { maxBytes: Math.max(artifact.size, 1) });
      add(
        `${folder}/artifacts/${safe(artifact.id)}-${safe(artifact.name)}`,
        text(artifact.mediaType, bytes),
      );
    }
    if (payload.bundle !== undefined && !bundles.has(payload.bundle)) {
      bundles.set(payload.bundle, `bundles/${bundles.size + 1}`);
    }
  }
  const index: Record<string, string> = {};
  for (const [dir, folder] of bundles) {
    index[folder] = dir;
    for (const rel of [...PUBLIC_FILES, ...(options.includeHidden ? HIDDEN_FILES : [])]) {
      const bytes = await bundleFile(dir, rel);
      if (bytes !== null) add(`${folder}/${rel}`, text('text/plain', bytes));
    }
  }
  add('bundles.json', json(index));
  add(
    'export.json',
    json({
      schema: 1,
      jobs: jobs.map((j) => j.id).sort((a, b) => a - b),
      includeHidden: options.includeHidden === true,
    }),
  );
  const sums = [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((e) => `${createHash('sha256').update(e.bytes).digest('hex')}  ${e.path}`);
  entries.push({ path: 'MANIFEST.sha256', bytes: Buffer.from(`${sums.join('\n')}\n`) });
  return {
    archive: await reproducibleTarGz('proctor-export', entries),
    jobs: jobs.length,
    files: entries.length,
  };
}
