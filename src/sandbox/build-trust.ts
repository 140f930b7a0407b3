// What every environment build is offered from the host so that it can fetch through a
// TLS-inspecting proxy without turning verification off: a CA bundle, and the host's proxy
// variables.
//
// The proxy variables are Docker's predefined build arguments (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY, ALL_PROXY, FTP_PROXY and their lower-case forms): passed as build args, every RUN
// step sees them and no Dockerfile has to declare them, and the engine leaves them out of the
// image's history and configuration.
//
// The bundle reaches the build's RUN steps without the user's Dockerfile changing. The engine's
// classic builder (the one the engine API builds with when no BuildKit session is opened) has
// no build-time secret or mount, so the bundle is a file of an image of its own (FROM scratch:
// the bundle and an apt configuration that names it), and the Dockerfile the engine reads is
// the task's with, after each FROM, one COPY of that file to TRUST_ROOT and one ARG a standard
// variable naming it. ARG values are the RUN steps' environment only: the image's ENV carries
// none of them, and a variable the Dockerfile sets itself (ENV) still wins. The file is left
// in the image at TRUST_ROOT: the classic builder cannot take it out without a shell in the
// image, and it is a public certificate list that nothing reads unless a variable names it.
// The rewritten Dockerfile goes into the build context under a name listed in the context's
// .dockerignore, so the engine drops it from the context after reading it (a `COPY . …` never
// sees it), as the docker CLI does with a Dockerfile read from standard input.
import { createReadStream } from 'node:fs';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Ignore } from '@balena/dockerignore';
import { pack as tarPack } from 'tar-stream';

// The package is CommonJS whose module.exports is the factory (its types say a default export).
const dockerIgnore = createRequire(import.meta.url)('@balena/dockerignore') as (options: {
  ignorecase: boolean;
}) => Ignore;

/** Where the bundle lies in every stage of a trusted build. */
export const TRUST_ROOT = '/opt/proctor/build-trust';

/** The variables that name the bundle in the RUN steps, each read by one family of tools. */
export const CA_VARIABLES = [
  'NODE_EXTRA_CA_CERTS', // node, npm, yarn, pnpm
  'SSL_CERT_FILE', // OpenSSL (python's ssl, wget, ruby), Go's crypto/x509
  'PIP_CERT', // pip
  'REQUESTS_CA_BUNDLE', // python requests
  'CARGO_HTTP_CAINFO', // cargo
  'GIT_SSL_CAINFO', // git over https
  'CURL_CA_BUNDLE', // curl
] as const;

/** The predefined build arguments a host's proxy settings travel in. */
export const PROXY_VARIABLES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'FTP_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'ftp_proxy',
] as const;

export interface BuildTrust {
  /** A PEM bundle of every CA the build's tools should trust (it replaces their default). */
  caBundle?: Buffer;
  /** Proxy build arguments (PROXY_VARIABLES) the host has. */
  proxy?: Partial<Record<(typeof PROXY_VARIABLES)[number], string>>;
}

/** The name of the rewritten Dockerfile in the build context; the engine drops it after reading. */
export const TRUSTED_DOCKERFILE = '.proctor-trusted.Dockerfile';

/** The files of the bundle's image: the bundle, and apt's configuration naming it. */
export function trustFiles(caBundle: Buffer): { name: string; content: Buffer }[] {
  return [
    { name: 'ca.crt', content: caBundle },
    // apt reads APT_CONFIG as its main configuration file (the apt.conf.d parts still come
    // first); its https method then verifies against the bundle.
    {
      name: 'apt.conf',
      content: Buffer.from(`Acquire::https::CAInfo "${TRUST_ROOT}/ca.crt";\n`),
    },
  ];
}

/** The Dockerfile of the bundle's image. */
export const TRUST_IMAGE_DOCKERFILE = `FROM scratch\nCOPY ca.crt apt.conf ${TRUST_ROOT}/\n`;

/** A short fingerprint of a bundle, for the image's tag. */
export function bundleDigest(caBundle: Buffer): string {
  return createHash('sha256').update(caBundle).digest('hex');
}

/** The lines put after each FROM: the bundle copied from `trustImage`, and its variables. */
export function trustLines(trustImage: string): string[] {
  return [
    `COPY --from=${trustImage} ${TRUST_ROOT} ${TRUST_ROOT}`,
    ...CA_VARIABLES.map((name) => `ARG ${name}=${TRUST_ROOT}/ca.crt`),
    `ARG APT_CONFIG=${TRUST_ROOT}/apt.conf`,
  ];
}

/**
 * The task's Dockerfile with trustLines after every FROM instruction (continuation lines,
 * comments and parser directives kept as they are; `# escape=` honoured).
 */
export function trustedDockerfile(text: string, trustImage: string): string {
  const lines = text.split('\n');
  const escape = escapeCharacter(lines);
  const out: string[] = [];
  let inInstruction = false;
  let isFrom = false;
  for (const line of lines) {
    out.push(line);
    const trimmed = line.trim();
    if (!inInstruction) {
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      isFrom = /^from\s/i.test(trimmed);
    } else if (trimmed === '' || trimmed.startsWith('#')) {
      // Blank and comment lines inside a continued instruction do not end it.
      continue;
    }
    const continues = line.trimEnd().endsWith(escape);
    inInstruction = continues;
    if (!continues && isFrom) {
      out.push(...trustLines(trustImage));
      isFrom = false;
    }
  }
  return out.join('\n');
}

/** The escape character of a Dockerfile: `\`, or the one its `# escape=` directive names. */
function escapeCharacter(lines: string[]): string {
  for (const line of lines) {
    const directive = /^#\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(line.trim());
    if (!directive) break;
    if (directive[1]?.toLowerCase() === 'escape' && directive[2] !== undefined) return directive[2];
  }
  return '\\';
}

/**
 * The build context as a tar stream: the listed entries of `root` that its .dockerignore keeps
 * (as dockerode packs them), plus `extra` files at its top; a .dockerignore among the extras
 * replaces the context's own.
 */
export function packContextWith(
  root: string,
  entries: readonly string[],
  ignoreText: string | undefined,
  extra: readonly { name: string; content: Buffer }[],
): Readable {
  const keep =
    ignoreText === undefined
      ? () => true
      : dockerIgnore({ ignorecase: false }).add(ignoreText).createFilter();
  const replaced = new Set(extra.map((file) => file.name));
  const tar = tarPack();
  const write = async () => {
    for (const name of entries) {
      if (replaced.has(name) || !keep(name)) continue;
      const path = join(root, name);
      const stat = await lstat(path);
      const header = { name, mode: stat.mode & 0o7777, mtime: stat.mtime, uid: 0, gid: 0 };
      if (stat.isSymbolicLink()) {
        tar.entry({ ...header, type: 'symlink', linkname: await readlink(path) });
      } else if (stat.isDirectory()) {
        tar.entry({ ...header, type: 'directory' });
      } else {
        await new Promise<void>((resolve, reject) => {
          const sink = tar.entry({ ...header, type: 'file', size: stat.size }, (error) =>
            error ? reject(error) : resolve(),
          );
          createReadStream(path).on('error', reject).pipe(sink);
        });
      }
    }
    for (const file of extra) tar.entry({ name: file.name, mode: 0o644 }, file.content);
    tar.finalize();
  };
  write().catch((error: unknown) => tar.destroy(error instanceof Error ? error : undefined));
  // tar-stream's Pack is a Readable of its own typings' Node version.
  return tar as unknown as Readable;
}

/** The context's .dockerignore text, if it has one among the listed entries. */
export async function readIgnore(
  root: string,
  entries: readonly string[],
): Promise<string | undefined> {
  return entries.includes('.dockerignore')
    ? await readFile(join(root, '.dockerignore'), 'utf8')
    : undefined;
}
