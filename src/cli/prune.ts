// `proctor prune [--keep N] [--json]`: removes this home's workspace templates (the prepared
// copies of task repositories that job workspaces are copied from), but the N most recently
// made, and this host's templates of homes whose folder is gone (a temporary home leaves its
// templates to no one else). Every template on the engine gets a line: removed or kept, and
// why. One a container is using right now (a job's copy, another process's preparation) is
// kept and the container named. Templates come back on the next job that needs one.
//
// `proctor prune --images [--json]` removes instead the images Proctor pulled by digest or
// built for a task (recorded in the home, src/sandbox/pulled-images.ts) that no queued or
// running job of any batch needs, and says what each freed; images it did not pull or build
// are never touched. They are pulled or built again by the next job that needs one.
import { basename } from 'node:path';
import { dockerHost } from '../config.js';
import { createDockerClient, requireDocker, type DockerClient } from '../sandbox/docker.js';
import { evictImages, type EvictionOutcome } from '../sandbox/image-evict.js';
import { openPulledImages, pulledImagesDir } from '../sandbox/pulled-images.js';
import { createNeededImages } from '../workers/needed-images.js';
import { pruneTemplates, type TemplateOutcome } from '../sandbox/template-prune.js';
import type { CommandContext } from './context.js';
import { formatTable } from './table.js';

/** KiB as a short size: `812 KiB`, `35.2 MiB`, `1.4 GiB`; `-` when unknown. */
export function sizeText(kb: number | null): string {
  if (kb === null) return '-';
  if (kb < 1024) return `${kb} KiB`;
  if (kb < 1024 * 1024) return `${(kb / 1024).toFixed(1)} MiB`;
  return `${(kb / 1024 / 1024).toFixed(1)} GiB`;
}

/** A daemon-local image id as `docker images` shows it: 12 hex digits. */
const shortImage = (id: string) => id.replace(/^sha256:/, '').slice(0, 12) || '-';

function summary(templates: readonly TemplateOutcome[]): string {
  const removed = templates.filter((t) => t.action === 'removed');
  const freed = removed.reduce((sum, t) => sum + (t.sizeKb ?? 0), 0);
  const kept = templates.length - removed.length;
  return (
    `removed ${removed.length} workspace template(s)` +
    (freed > 0 ? ` (${sizeText(freed)})` : '') +
    (kept > 0 ? `; kept ${kept}` : '')
  );
}

/** Bytes as a short size: `812 B`, `35.2 MB`, `1.40 GB` (powers of ten, as [images] max_gb). */
export function bytesText(bytes: number): string {
  if (bytes < 1e6) return `${bytes} B`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}

/** A pulled image by its reference; a built one by the bundle folder it was first used for. */
function imageName(image: EvictionOutcome): string {
  if (image.kind !== 'built') return image.reference;
  const [first, ...more] = image.bundles ?? [];
  if (first === undefined) return 'built';
  return `built for ${basename(first)}${more.length > 0 ? ` (+${more.length} more)` : ''}`;
}

async function pruneImages(
  context: CommandContext,
  docker: DockerClient,
  json: boolean,
): Promise<number> {
  const store = context.openStore();
  try {
    const result = await evictImages(
      docker,
      openPulledImages(pulledImagesDir(context.config.home)),
      {
        keepBytes: 0,
        needed: createNeededImages(store),
      },
    );
    if (json) {
      context.io.out(JSON.stringify(result));
      return 0;
    }
    const removed = result.images.filter((i) => i.action === 'removed');
    const kept = result.images.length - removed.length;
    context.io.out(
      `removed ${removed.length} image(s), freed ${bytesText(result.freedBytes)}` +
        (kept > 0 ? `; kept ${kept} (${bytesText(result.afterBytes)})` : ''),
    );
    if (result.images.length === 0) return 0;
    context.io.out(
      formatTable(
        ['IMAGE', 'ID', 'SIZE', 'LAST USED', 'OUTCOME'],
        result.images.map((i) => [
          imageName(i),
          shortImage(i.localId),
          bytesText(i.sizeBytes),
          new Date(i.usedAt).toISOString(),
          `${i.action}: ${i.detail}`,
        ]),
      ),
    );
    return 0;
  } finally {
    await store.close();
  }
}

export async function pruneCommand(
  context: CommandContext,
  options: { keep: number; json?: boolean; images?: boolean },
): Promise<number> {
  const docker = createDockerClient(dockerHost());
  await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
  if (options.images) return pruneImages(context, docker, options.json === true);
  const { config } = context;
  // As the worker's reaper: a SQLite home serves one machine, so what it made before host
  // labels is its own; on a shared queue nothing can tell.
  const scope = { home: config.home, host: config.host, unlabelled: config.dbUrl === undefined };
  const result = await pruneTemplates(docker, scope, options.keep, {
    goneHomes: true,
    images: true,
  });
  if (options.json) {
    context.io.out(JSON.stringify(result));
    return 0;
  }
  context.io.out(summary(result.templates));
  if (result.templates.length === 0) return 0;
  context.io.out(
    formatTable(
      ['TEMPLATE', 'IMAGE', 'HOME', 'SIZE', 'OUTCOME'],
      result.templates.map((t) => [
        t.name,
        shortImage(t.image),
        t.home === ''
          ? "(every home: the image's)"
          : t.home === config.home
            ? `${t.home} (this home)`
            : t.home,
        sizeText(t.sizeKb),
        `${t.action}: ${t.detail}`,
      ]),
    ),
  );
  return 0;
}
