// bench:import --pulled: a row's catalog environment, re-laid out as SWE-bench's published
// instance images are and served from a local registry, so that the same task is graded on a
// pulled image beside the built one. The re-layout (bench/swebench-layout.ts): on top of the
// built environment image, /testbed becomes the repository's own clone at the row's
// base_commit (no remote), the environment's Python is reachable at conda's path
// (/opt/miniconda3/envs/testbed, where `--images` expects it), the task's install runs in
// /testbed and its changes to tracked files are committed as SWE-bench's setup commit.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dockerCli, pushImage } from './local-registry.js';
import { SETUP_COMMIT, sweName, testbedContext } from './swebench-layout.js';

/** The label of every image and container the bench makes, so that none outlives it unseen. */
export const BENCH_LABEL = 'proctor.bench=import';

export interface Relaid {
  /** The name in the registry the image was pushed to (no longer in the engine). */
  name: string;
  digest: string;
  buildMs: number;
  pushMs: number;
}

/**
 * Builds the re-laid image of `row` from `builtImage` (an image ID), pushes it to `host` under
 * SWE-bench's name and drops the name from the engine, so that a grade must pull it. Only the
 * layers the re-layout adds are then absent: the built image's layers stay in the engine.
 */
export async function relayAsSweBench(options: {
  builtImage: string;
  mirror: string;
  instanceId: string;
  baseCommit: string;
  install: string | undefined;
  workdir: string;
  host: string;
}): Promise<Relaid> {
  const context = join(options.workdir, `layout-${options.instanceId}`);
  mkdirSync(context, { recursive: true });
  testbedContext(context, options.mirror, options.baseCommit);
  const dockerfile = [
    `FROM ${options.builtImage}`,
    'USER root',
    'RUN rm -rf /testbed',
    'COPY testbed /testbed',
    'WORKDIR /testbed',
    // The environment's own Python (the catalog's venv) where SWE-bench's conda env would be.
    'RUN mkdir -p /opt/miniconda3/envs \\',
    ' && ln -s "$(dirname "$(dirname "$(command -v python3)")")" /opt/miniconda3/envs/testbed',
    `RUN ${options.install ?? 'true'} && ${SETUP_COMMIT}`,
    '',
  ].join('\n');
  writeFileSync(join(context, 'Dockerfile'), dockerfile);
  const name = sweName(options.host, options.instanceId);
  let started = performance.now();
  await dockerCli('build', '-q', '--network', 'host', '--label', BENCH_LABEL, '-t', name, context);
  const buildMs = performance.now() - started;
  started = performance.now();
  try {
    const digest = await pushImage(name, name);
    return { name, digest, buildMs, pushMs: performance.now() - started };
  } finally {
    await dockerCli('rmi', name);
  }
}
