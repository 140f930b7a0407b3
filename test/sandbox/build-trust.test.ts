import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTrust } from '../../src/config.js';
import { ProctorError } from '../../src/errors.js';
import {
  CA_VARIABLES,
  TRUST_ROOT,
  bundleDigest,
  trustedDockerfile,
  type BuildTrust,
} from '../../src/sandbox/build-trust.js';
import { baseImages, buildDockerfile } from '../../src/sandbox/build.js';
import { buildInstallLayer } from '../../src/sandbox/install.js';
import { requireDocker } from '../../src/sandbox/index.js';
import { execFileAsync, fixtureImage, testDocker } from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { startTlsServer } from '../helpers/tls-server.js';

const docker = testDocker();

/** Builds `dockerfile` (context: `files` too) with `trust`; the image is removed after the test. */
async function build(dockerfile: string, trust: BuildTrust, files: Record<string, string> = {}) {
  const dir = tempDir();
  writeFileSync(join(dir, 'Dockerfile'), dockerfile);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const image = await buildDockerfile(
    docker,
    { contextDir: dir, dockerfile: 'Dockerfile' },
    { trust, timeoutMs: 600_000 },
  );
  await dropAfter(image.localId);
  return image;
}

/**
 * Tags `id` for this test and removes that tag after it, never the image by force: a build the
 * engine's cache served shares its id with another test's image, which must stay.
 */
async function dropAfter(id: string): Promise<void> {
  const tag = `t${randomBytes(6).toString('hex')}`;
  onCleanup(async () => {
    await docker
      .getImage(`proctor-test-build-trust:${tag}`)
      .remove()
      .catch(() => undefined);
  });
  await docker.getImage(id).tag({ repo: 'proctor-test-build-trust', tag });
}

/** Removes the bundle's image a trusted build made (it is the test's own CA). */
function removeTrustImage(ca: Buffer): void {
  onCleanup(async () => {
    await execFileAsync('docker', [
      'rmi',
      '-f',
      `proctor-build-trust:${bundleDigest(ca).slice(0, 12)}`,
    ]).catch(() => undefined);
  });
}

describe('the Dockerfile a trusted build reads', () => {
  it('copies the bundle and names it in build arguments after every FROM, nothing else changed', () => {
    const text = [
      '# escape=`',
      'FROM debian:bookworm-slim AS one',
      'RUN echo `',
      '  FROM not-an-instruction',
      'from --platform=linux/amd64 `',
      '  busybox',
      '# FROM in a comment',
      'COPY --from=one /x /x',
    ].join('\n');
    const lines = trustedDockerfile(text, 'sha256:abc').split('\n');
    const inserted = [
      `COPY --from=sha256:abc ${TRUST_ROOT} ${TRUST_ROOT}`,
      ...CA_VARIABLES.map((name) => `ARG ${name}=${TRUST_ROOT}/ca.crt`),
      `ARG APT_CONFIG=${TRUST_ROOT}/apt.conf`,
    ];
    expect(lines).toEqual([
      '# escape=`',
      'FROM debian:bookworm-slim AS one',
      ...inserted,
      'RUN echo `',
      '  FROM not-an-instruction',
      'from --platform=linux/amd64 `',
      '  busybox',
      ...inserted,
      '# FROM in a comment',
      'COPY --from=one /x /x',
    ]);
  });
});

describe('the host trust every build is offered', () => {
  const withEnv = (values: Record<string, string | undefined>) => {
    const saved = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
    const set = (all: Record<string, string | undefined>) => {
      for (const [k, v] of Object.entries(all)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    };
    set(values);
    onCleanup(() => set(saved));
  };

  it('is the ca_bundle file when set, none when false, the host variables by default', () => {
    const home = tempDir();
    writeFileSync(join(home, 'mine.pem'), 'MINE\n');
    writeFileSync(join(home, 'file.pem'), 'FILE\n');
    writeFileSync(join(home, 'extra.pem'), 'EXTRA\n');
    withEnv({
      SSL_CERT_FILE: join(home, 'file.pem'),
      NODE_EXTRA_CA_CERTS: join(home, 'extra.pem'),
      HTTPS_PROXY: 'http://proxy.example:3128',
      no_proxy: 'localhost',
    });
    expect(buildTrust({ home, build: { ca_bundle: 'mine.pem' } }).caBundle?.toString()).toBe(
      'MINE\n',
    );
    expect(buildTrust({ home, build: { ca_bundle: false } }).caBundle).toBeUndefined();
    const auto = buildTrust({ home, build: {} });
    expect(auto.caBundle?.toString()).toBe('FILE\n\nEXTRA\n\n');
    expect(auto.proxy).toEqual({ HTTPS_PROXY: 'http://proxy.example:3128', no_proxy: 'localhost' });
    withEnv({ SSL_CERT_FILE: undefined, NODE_EXTRA_CA_CERTS: undefined });
    expect(buildTrust({ home, build: {} }).caBundle).toBeUndefined();
  });

  it('refuses an unreadable bundle with one line naming the file and where it came from', () => {
    const home = tempDir();
    withEnv({ SSL_CERT_FILE: join(home, 'gone.pem') });
    let error: unknown;
    try {
      buildTrust({ home, build: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProctorError);
    expect((error as ProctorError).code).toBe('CONFIG_INVALID');
    expect((error as Error).message).toMatch(
      new RegExp(`^SSL_CERT_FILE: cannot read the CA bundle ${join(home, 'gone.pem')}: ENOENT`),
    );
    expect(() => buildTrust({ home, build: { ca_bundle: 'none.pem' } })).toThrow(
      /proctor\.toml: key `build\.ca_bundle`: cannot read the CA bundle .*none\.pem: ENOENT/,
    );
  });
});

describe('an environment build behind a TLS-inspecting proxy', () => {
  const clientsImage = 'proctor-test-tls-clients:latest';
  beforeAll(async () => {
    await requireDocker(docker);
    await fixtureImage('tls-clients');
  }, 600_000);

  // Each client, as an environment's RUN step would call it against the server at URL.
  const clients: Record<string, { run: string; path: RegExp }> = {
    // No retries: a refused certificate is refused at once, not after npm's backoff (70 s).
    npm: { run: 'npm ping --fetch-retries=0 --registry URL/', path: /^\/-\/ping/ },
    pip: {
      run: 'python3 -m pip index versions demo --retries 0 --index-url URL/simple/',
      path: /^\/simple\/demo\/$/,
    },
    apt: {
      run: '/usr/lib/apt/apt-helper download-file URL/file /tmp/f && grep -q "hello over tls" /tmp/f',
      path: /^\/file$/,
    },
    git: { run: 'git ls-remote URL/index.git', path: /^\/index\.git\/info\/refs/ },
    go: {
      run: 'cd /tmp && GOPROXY=URL/go GOSUMDB=off go list -m -json example.com/demo@v1.0.0',
      path: /^\/go\/example\.com\/demo\/@v\/v1\.0\.0\.info$/,
    },
    cargo: {
      run: 'CARGO_REGISTRIES_T_INDEX=URL/index.git cargo search demo --registry t',
      path: /^\/api\/v1\/crates\?/,
    },
    curl: { run: 'curl -fsS URL/file', path: /^\/file$/ },
  };

  for (const [name, client] of Object.entries(clients)) {
    it(`lets ${name} trust the host's CA only through the offered bundle`, async () => {
      const server = await startTlsServer();
      removeTrustImage(server.ca);
      // A nonce: no earlier build's cache answers for this one.
      const dockerfile = `FROM ${clientsImage}\nRUN set -e; : ${randomBytes(6).toString('hex')}; ${client.run.replaceAll('URL', server.url)}\n`;

      const refused = await build(dockerfile, {}).catch((e: unknown) => e as ProctorError);
      expect(refused).toBeInstanceOf(ProctorError);
      expect((refused as ProctorError).message).toMatch(/certificate|x509|SSL|CERT/i);
      expect(server.requests.filter((p) => client.path.test(p))).toEqual([]);

      const image = await build(dockerfile, { caBundle: server.ca });
      expect(server.requests.some((p) => client.path.test(p))).toBe(true);
      // The variables were the RUN steps' alone: the image's environment names none of them.
      const env = (await docker.getImage(image.localId).inspect()).Config.Env ?? [];
      expect(env.filter((e) => e.includes(TRUST_ROOT))).toEqual([]);
    }, 900_000);
  }

  it('keeps the rewritten Dockerfile out of what COPY sees, and a .dockerignore working', async () => {
    const server = await startTlsServer();
    removeTrustImage(server.ca);
    const image = await build(
      `FROM ${clientsImage}\nCOPY . /ctx\nRUN ls -A /ctx > /listing\n`,
      { caBundle: server.ca },
      { '.dockerignore': 'secret.txt\n', 'secret.txt': 'x', 'kept.txt': 'y' },
    );
    const { stdout } = await execFileAsync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      image.localId,
      'cat',
      '/listing',
    ]);
    expect(
      stdout
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual(['.dockerignore', 'Dockerfile', 'kept.txt']);
  }, 600_000);

  it('offers the bundle to an [environment] install layer too', async () => {
    const server = await startTlsServer();
    removeTrustImage(server.ca);
    const nonce = randomBytes(6).toString('hex');
    const base = await build(
      `FROM ${clientsImage}\nRUN git init -q /repo && cd /repo && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m ${nonce}\n`,
      {},
    );
    const { stdout } = await execFileAsync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      base.localId,
      'git',
      '-C',
      '/repo',
      'rev-parse',
      'HEAD',
    ]);
    const spec = {
      command: `curl -fsS ${server.url}/file > /dev/null`,
      workdir: '/repo',
      baseCommit: stdout.trim(),
    };
    const refused = await buildInstallLayer(docker, base, spec, {}).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(
      /^\[environment\] install: the install command failed \(exit 60\).*certificate/,
    );
    const layer = await buildInstallLayer(docker, base, spec, { trust: { caBundle: server.ca } });
    await dropAfter(layer.localId);
    expect(server.requests).toContain('/file');
  }, 600_000);
});

describe('baseImages', () => {
  it("names each FROM's image once, in order, and skips scratch, stages and ARG-built names", () => {
    expect(
      baseImages(
        [
          'ARG BASE=debian:bookworm-slim',
          'FROM --platform=linux/amd64 debian:trixie-slim AS Build',
          'RUN true',
          'FROM $BASE',
          'FROM build',
          'FROM scratch',
          'from \\',
          '  debian:bullseye-slim as final',
          'FROM debian:trixie-slim',
        ].join('\n'),
      ),
    ).toEqual(['debian:trixie-slim', 'debian:bullseye-slim']);
  });
});
