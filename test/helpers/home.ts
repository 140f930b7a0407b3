// Checks over what a Proctor home left behind: every byte it stored, and the Docker resources
// still labelled with it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { testDocker } from './docker.js';

/** Every byte under `dir` (the database, its WAL, every artifact), to search for secrets. */
export function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) parts.push(readFileSync(path));
  }
  return Buffer.concat(parts);
}

/**
 * The containers and volumes labelled with one Proctor home (none may be left). Workspace
 * templates are meant to outlive jobs: they are not counted, and are removed here, since a
 * test's home is never used again. `host`: the host identity its workers ran as
 * (PROCTOR_HOST), when not this machine's: its templates are labelled with it.
 */
export async function leftovers(home: string, host?: string): Promise<string[]> {
  const docker = testDocker();
  await pruneTemplates(docker, host === undefined ? home : { home, host, unlabelled: false });
  const filters = { label: [`proctor.home=${home}`] };
  const containers = await docker.listContainers({ all: true, filters });
  const { Volumes } = await docker.listVolumes({ filters });
  return [...containers.map((c) => c.Id), ...(Volumes ?? []).map((v) => v.Name)];
}
