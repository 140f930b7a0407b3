// Building a task's Dockerfile: the build context is environment/ alone, packed file by file
// (symlinks that leave it are refused), built with the host network for the build only, its
// output kept bounded (head and tail) for the log. With a CA bundle or proxy settings from the
// host (build-trust.ts), every RUN step is offered them. The image id is the identity, both for
// later Docker calls and as the non-portable `local_build` record.
import { lstat, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { dirname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { ProctorError, describeError } from '../errors.js';
import {
  bundleDigest,
  packContextWith,
  readIgnore,
  TRUST_IMAGE_DOCKERFILE,
  TRUSTED_DOCKERFILE,
  trustedDockerfile,
  trustFiles,
} from './build-trust.js';
import { deadline, followJson, imageInvalid as invalid, inspectImage } from './daemon.js';
import type { DockerClient } from './docker.js';
import type { ResolvedImage, ResolveImageOptions } from './image.js';
import { createOutputBuffer } from './output-buffer.js';

export async function buildDockerfile(
  docker: DockerClient,
  source: { contextDir: string; dockerfile: string },
  options: ResolveImageOptions,
): Promise<ResolvedImage> {
  const { root, dockerfile, entries } = await packContext(
    source,
    options.maxContextFiles ?? 50_000,
  );
  const what = `building ${source.dockerfile} in ${source.contextDir}`;
  try {
    return await buildPacked(docker, root, dockerfile, entries, what, options);
  } catch (error) {
    if (!(error instanceof ProctorError) || error.code !== 'IMAGE_INVALID') throw error;
    const hint = await missingBaseHint(docker, await readFile(join(root, dockerfile), 'utf8'));
    if (hint === undefined) throw error;
    // The way out first: a job's detail shows the message's first line.
    throw new ProctorError(error.code, `${hint}\n${error.message}`, {
      cause: error,
      data: error.data,
    });
  }
}

async function buildPacked(
  docker: DockerClient,
  root: string,
  dockerfile: string,
  entries: string[],
  what: string,
  options: ResolveImageOptions,
): Promise<ResolvedImage> {
  const caBundle = options.trust?.caBundle;
  if (caBundle === undefined) {
    return runBuild(docker, { context: root, src: entries }, dockerfile, what, options);
  }
  // The bundle's image first (a cache hit after the first build with this bundle), then the
  // task's Dockerfile with the bundle copied in after each FROM (build-trust.ts).
  const trustImage = await buildTrustImage(docker, caBundle, options);
  const ignore = await readIgnore(root, entries);
  const text = await readFile(join(root, dockerfile), 'utf8');
  const context = packContextWith(root, entries, ignore, [
    { name: TRUSTED_DOCKERFILE, content: Buffer.from(trustedDockerfile(text, trustImage)) },
    {
      name: '.dockerignore',
      content: Buffer.from(
        ignore === undefined
          ? `${TRUSTED_DOCKERFILE}\n.dockerignore\n`
          : `${ignore}\n${TRUSTED_DOCKERFILE}\n`,
      ),
    },
  ]);
  return runBuild(docker, context, TRUSTED_DOCKERFILE, what, options);
}

/**
 * The images a Dockerfile's FROM lines name (not `scratch`, an earlier stage, or a name built
 * from an ARG), in order, each once.
 */
export function baseImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const images: string[] = [];
  // Continuation lines joined, as the builder reads them.
  for (const line of dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/)) {
    const from = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?\s*$/i.exec(line);
    if (!from) continue;
    const image = from[1]!;
    if (from[2]) stages.add(from[2].toLowerCase());
    if (image === 'scratch' || image.includes('$') || stages.has(image.toLowerCase())) continue;
    if (!images.includes(image)) images.push(image);
  }
  return images;
}

/**
 * When a build failed and a base image it names is not in the engine (no registry gave it),
 * one line per such image saying how to make it: Debian's `debian:<suite>-slim` with
 * docker/base-image.sh, which builds it where no registry can be reached.
 */
async function missingBaseHint(
  docker: DockerClient,
  dockerfile: string,
): Promise<string | undefined> {
  const lines: string[] = [];
  for (const image of baseImages(dockerfile)) {
    if ((await inspectImage(docker, image)) !== undefined) continue;
    const debian = /^(?:docker\.io\/)?(?:library\/)?debian:([a-z]+)-slim$/.exec(image);
    lines.push(
      debian
        ? `the base image ${image} is not in the engine and no registry gave it: make it with \`bash docker/base-image.sh ${debian[1]}\` (Debian's debootstrap; docs/development.md)`
        : `the base image ${image} is not in the engine and no registry gave it: pull or load it into the engine first`,
    );
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}

/** The image holding a CA bundle for trusted builds (build-trust.ts); its local id. */
async function buildTrustImage(
  docker: DockerClient,
  caBundle: Buffer,
  options: ResolveImageOptions,
): Promise<string> {
  const context = packContextWith('', [], undefined, [
    ...trustFiles(caBundle),
    { name: 'Dockerfile', content: Buffer.from(TRUST_IMAGE_DOCKERFILE) },
  ]);
  const built = await runBuild(docker, context, 'Dockerfile', 'building the CA bundle image', {
    ...options,
    tag: `proctor-build-trust:${bundleDigest(caBundle).slice(0, 12)}`,
    labels: {},
  });
  return built.localId;
}

/** One build through the engine API; the image it made, or a ProctorError with its log. */
async function runBuild(
  docker: DockerClient,
  context: { context: string; src: string[] } | Readable,
  dockerfile: string,
  what: string,
  options: ResolveImageOptions,
): Promise<ResolvedImage> {
  const d = deadline(options.timeoutMs ?? 900_000, options.signal, options.timeoutHint);
  const log = createOutputBuffer(options.buildLogBytes ?? 65_536);
  const proxy = Object.entries(options.trust?.proxy ?? {}).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  let imageId: string | undefined;
  let failure: string | undefined;
  try {
    const stream = await docker.buildImage(context, {
      dockerfile,
      ...(options.tag ? { t: options.tag } : {}),
      // Given at build time, they win over any LABEL of the same key the Dockerfile sets.
      labels: { ...options.labels, 'proctor.build': '1' },
      // Predefined build arguments: every RUN step sees them, the image keeps none.
      ...(proxy.length > 0 ? { buildargs: Object.fromEntries(proxy) } : {}),
      // The build alone gets the network (apt-get, pip); no task container ever does.
      networkmode: 'host',
      rm: true,
      forcerm: true,
      abortSignal: d.signal,
    });
    await followJson(stream, d.signal, (event) => {
      if (typeof event['stream'] === 'string') log.write(Buffer.from(event['stream']));
      if (typeof event['error'] === 'string') {
        failure = event['error'];
        log.write(Buffer.from(`${failure}\n`));
      }
      const aux = event['aux'] as { ID?: unknown } | undefined;
      if (typeof aux?.ID === 'string') imageId = aux.ID;
    });
  } catch (error) {
    const cause = d.failure(error, what);
    throw new ProctorError(cause.code, cause.message, { cause, data: { buildLog: log.text() } });
  }
  const buildLog = log.text();
  if (failure !== undefined || imageId === undefined) {
    const tail = buildLog.slice(-2_000).trimEnd();
    throw new ProctorError(
      failure === undefined ? 'DOCKER_ERROR' : 'IMAGE_INVALID',
      `${what} failed: ${failure ?? 'the daemon reported no image id'}\n${tail}`,
      { data: { buildLog } },
    );
  }
  const info = await inspectImage(docker, imageId);
  if (!info) throw new ProctorError('DOCKER_ERROR', `${what}: built image ${imageId} vanished`);
  return {
    localId: info.Id,
    identity: { portable: false, kind: 'local_build', imageId: info.Id },
    buildLog,
  };
}

/** The context is the folder alone: its files, listed for dockerode to pack, none leaving it. */
async function packContext(
  source: { contextDir: string; dockerfile: string },
  maxFiles: number,
): Promise<{ root: string; dockerfile: string; entries: string[] }> {
  const where = `the build context ${source.contextDir}`;
  const root = await realpath(source.contextDir).catch((error: unknown) => {
    throw invalid(`${where} cannot be read: ${describeError(error)}`);
  });
  const [named, rel] = [JSON.stringify(source.dockerfile), normalize(source.dockerfile)];
  if (rel.includes('\0') || isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) {
    throw invalid(`dockerfile ${named} escapes ${where}: it must be a relative path inside it`);
  }
  const file = join(root, rel);
  // realpath equal to the lexical path: no symlink on the way, so the file really is inside.
  const real = await realpath(file).catch(() => undefined);
  if (real !== file || !(await lstat(file)).isFile()) {
    throw invalid(
      `dockerfile ${named} is not a regular file inside ${where} (missing, a folder or a symlink)`,
    );
  }
  const entries: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const children = await readdir(join(root, dir), { withFileTypes: true });
    if (children.length === 0 && dir !== '') entries.push(dir);
    for (const child of children) {
      const path = dir === '' ? child.name : `${dir}/${child.name}`;
      if (child.isDirectory()) await walk(path);
      else if (child.isFile()) entries.push(path);
      else if (child.isSymbolicLink()) {
        const target = await readlink(join(root, path));
        const lands = resolve(dirname(join(root, path)), target);
        if (isAbsolute(target) || (lands !== root && !lands.startsWith(`${root}${sep}`))) {
          throw invalid(`symlink ${path} -> ${target} leaves ${where}`);
        }
        entries.push(path);
      } else throw invalid(`${path} in ${where} is not a file, folder or symlink`);
      if (entries.length > maxFiles) throw invalid(`${where} holds more than ${maxFiles} entries`);
    }
  };
  await walk('');
  return { root, dockerfile: rel.split(sep).join('/'), entries };
}
