// The machine set-up that .ci/run and the README rely on: a Docker engine answers, the
// set-up scripts are idempotent (and quick once done), and the base image runs a container
// under the flags Proctor's isolation profile uses. A missing engine fails here, loudly.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pathWithout } from '../helpers/fake-path.js';
import { startNamespaceHosts, type NamespaceHost } from '../helpers/namespace-hosts.js';
import { ROOT } from '../helpers/processes.js';

const run = promisify(execFile);

const RUNSC = execFileSync('sh', ['-c', 'command -v runsc'], { encoding: 'utf8' }).trim();

describe('docker set-up', () => {
  it('finds a running engine and the base image, and changes nothing on a second run', async () => {
    for (const script of ['docker/setup-engine.sh', 'docker/base-image.sh']) {
      const started = Date.now();
      const { stderr } = await run('bash', [script], { cwd: ROOT });
      expect(stderr, `${script} should have nothing to do`).toBe('');
      expect(Date.now() - started).toBeLessThan(15_000);
    }
  });

  it('runs the base image with no network, a read-only root and no capabilities', async () => {
    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      '--read-only',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--user',
      '1000:1000',
      '--label',
      'proctor.job=engine-test',
      'debian:bookworm-slim',
      'sh',
      '-c',
      'id -u; cat /etc/debian_version; touch /x 2>/dev/null || echo read-only',
    ]);
    const [uid, version, readOnly] = stdout.trim().split('\n');
    expect(uid).toBe('1000');
    expect(version).toMatch(/^12\./);
    expect(readOnly).toBe('read-only');
  });
});

describe('gVisor (.ci/test-tools installs and registers runsc)', () => {
  it('is registered with the engine and runs a networkless container under its own kernel', async () => {
    const { stdout: runtimes } = await run('docker', ['info', '--format', '{{json .Runtimes}}']);
    expect(Object.keys(JSON.parse(runtimes) as object)).toContain('runsc');
    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--runtime',
      'runsc',
      '--network',
      'none',
      '--label',
      'proctor.job=engine-test',
      'debian:bookworm-slim',
      'uname',
      '-r',
    ]);
    // gVisor's Sentry reports its own kernel version, not the host's.
    const { stdout: host } = await run('uname', ['-r']);
    expect(stdout.trim()).not.toBe(host.trim());
  });
});

describe('setup-engine.sh with an engine already running without runsc', () => {
  it('registers runsc in its daemon.json (other keys kept), reloads it, and verifies with docker info', async () => {
    // A dockerd of its own (network namespace, data and config file), never the machine's.
    const machine = await startNamespaceHosts(1, { daemonJson: { 'log-level': 'warn' } });
    try {
      const [host] = machine.hosts as [NamespaceHost];
      const config = join(host.root, 'daemon.json');
      const env = {
        ...process.env,
        DOCKER_HOST: host.dockerHost,
        PROCTOR_DOCKERD_CONFIG: config,
        PROCTOR_DOCKERD_PIDFILE: join(host.root, 'docker.pid'),
      };
      const runtimes = async () =>
        Object.keys(
          JSON.parse(
            (await run('docker', ['info', '--format', '{{json .Runtimes}}'], { env })).stdout,
          ) as object,
        );
      expect(await runtimes()).not.toContain('runsc');

      const first = await run('bash', ['docker/setup-engine.sh'], { cwd: ROOT, env });
      expect(first.stderr).toContain(`setup-engine: registered runsc in ${config}`);
      expect(first.stderr).toContain('setup-engine: runsc registered');
      expect(JSON.parse(readFileSync(config, 'utf8'))).toEqual({
        'log-level': 'warn',
        runtimes: {
          runsc: { path: expect.stringMatching(/\/runsc$/), runtimeArgs: ['--network=none'] },
        },
      });
      expect(await runtimes()).toContain('runsc');
      // The same engine, reloaded rather than restarted; and a second run has nothing to do.
      expect(readFileSync(join(host.root, 'docker.pid'), 'utf8').trim()).toBe(String(host.pid));
      const second = await run('bash', ['docker/setup-engine.sh'], { cwd: ROOT, env });
      expect(second.stderr).toBe('');
    } finally {
      await machine.close();
    }
  });

  it('says in one line that an engine elsewhere lacks runsc, and leaves it alone', async () => {
    const machine = await startNamespaceHosts(1, { daemonJson: {} });
    try {
      const [host] = machine.hosts as [NamespaceHost];
      const env = { ...process.env, DOCKER_HOST: host.dockerHost };
      const { stderr } = await run('bash', ['docker/setup-engine.sh'], { cwd: ROOT, env });
      expect(stderr.trim()).toBe(
        `setup-engine: note: the engine at DOCKER_HOST=${host.dockerHost} does not register runsc; add it to that engine's daemon.json to use [sandbox] runtime = "runsc"`,
      );
      expect(JSON.parse(readFileSync(join(host.root, 'daemon.json'), 'utf8'))).toEqual({});
    } finally {
      await machine.close();
    }
  });
});

describe('setup-engine.sh without runsc', () => {
  it('installs runsc with apt-get before it looks at the engine', async () => {
    const { bin, path } = pathWithout(
      ['runsc'],
      `case "$*" in "install -y -qq runsc") ln -s ${JSON.stringify(RUNSC)} "$BIN/runsc" ;; esac`,
    );
    const { stderr } = await run('bash', ['docker/setup-engine.sh'], {
      cwd: ROOT,
      env: { ...process.env, PATH: path },
    });
    expect(stderr.trim()).toBe("setup-engine: installing Debian's runsc");
    expect(readFileSync(join(bin, 'apt.log'), 'utf8')).toBe('update -qq\ninstall -y -qq runsc\n');
  });

  it('goes on without it, saying so, when apt-get cannot install it (only runsc tasks need it)', async () => {
    const { path } = pathWithout(
      ['runsc'],
      'case "$1" in install) echo "E: Unable to locate package runsc" >&2; exit 100 ;; esac',
    );
    const { stderr } = await run('bash', ['docker/setup-engine.sh'], {
      cwd: ROOT,
      env: { ...process.env, PATH: path },
    });
    expect(stderr.trim().split('\n')).toEqual([
      "setup-engine: installing Debian's runsc",
      'setup-engine: could not install runsc with apt-get: E: Unable to locate package runsc',
      'setup-engine: note: continuing without runsc; [sandbox] runtime = "runsc" will not be available',
    ]);
  });
});
