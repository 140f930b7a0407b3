// `proctor validate PATH… [--static]`: every problem of every bundle with its file and key,
// then (unless --static) the image identity and base commit checked with Docker; for each
// valid bundle its integrity layers and any warnings (integrity.ts), which never change the
// exit code. Exit 0 when all are valid, 1 when any is not, 2 when Docker cannot be reached.
//
// The check runs here, not as a validate job: the CLI is the user's own process, bounded by
// their Ctrl-C, and they wait for the answer anyway, so a durable job and a worker would add
// nothing. It runs the same checkImage a validate job runs, so both agree on every answer.
import { buildTrust, dockerHost } from '../config.js';
import { coverageLines, validatePaths, type ValidationResult } from '../oracle/index.js';
import { createDockerClient, requireDocker } from '../sandbox/docker.js';
import { join } from 'node:path';
import type { Bundle } from '../oracle/bundle.js';
import { openPulledImages, pulledImagesDir } from '../sandbox/pulled-images.js';
import type { ResolvedImage } from '../sandbox/index.js';
import { createImageCache } from '../workers/images.js';
import type { CommandContext } from './context.js';

function describeIdentity(result: Extract<ValidationResult, { ok: true }>): string {
  if (!result.identity) return 'format and paths';
  return result.identity.portable
    ? `image ${result.identity.digest}`
    : `local_build ${result.identity.imageId}`;
}

export async function validateCommand(
  context: CommandContext,
  paths: string[],
  options: { static?: boolean; json?: boolean },
): Promise<number> {
  const { io, config } = context;
  let docker;
  let resolve: ((bundle: Bundle, signal?: AbortSignal) => Promise<ResolvedImage>) | undefined;
  if (!options.static) {
    docker = createDockerClient(dockerHost());
    await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
    // The worker's image cache: the image checked is the one each grade of the task runs (its
    // tag and labels name its build context), recorded in the home as a worker records it, so
    // the evaluator's template validate makes for it is the one every grade takes.
    const images = createImageCache(
      docker,
      { dir: join(config.home, 'cache', 'contexts') },
      {
        trust: buildTrust(config),
        timeoutMs: config.images.timeoutMs,
        pulled: openPulledImages(pulledImagesDir(config.home)),
      },
    );
    resolve = (bundle, signal) => images.resolve(bundle, signal);
  }
  const results = await validatePaths(
    paths,
    {
      ...(docker ? { docker } : {}),
      ...(resolve ? { resolve } : {}),
      home: config.home,
      host: config.host,
      uid: config.sandbox.uid,
      gid: config.sandbox.gid,
      ...(config.sandbox.runtime !== 'runc' ? { runtime: config.sandbox.runtime } : {}),
      ...(docker ? { trust: buildTrust(config), imageTimeoutMs: config.images.timeoutMs } : {}),
    },
    {},
    (result) => {
      if (options.json) return;
      if (result.ok) {
        io.out(`ok      ${result.id}  ${result.dir}  (${describeIdentity(result)})`);
        io.out(`  integrity: ${result.layers.join(', ')}`);
        for (const line of coverageLines(result.canaries)) io.out(line);
        for (const warning of result.warnings) io.out(`  warning: ${warning}`);
      } else {
        io.out(`INVALID ${result.id ?? ''}${result.id ? '  ' : ''}${result.dir}`);
        for (const problem of result.problems) io.out(`  ${problem}`);
      }
    },
  );
  const invalid = results.filter((r) => !r.ok).length;
  if (options.json)
    io.out(JSON.stringify({ valid: results.length - invalid, invalid, results }, null, 2));
  else io.out(`${results.length - invalid} valid, ${invalid} invalid`);
  return invalid > 0 ? 1 : 0;
}
