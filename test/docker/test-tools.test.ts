// .ci/test-tools, which `npm test` runs first (test/helpers/global-setup.ts) so that it works
// on a fresh machine: it reports every tool present, twice in a row and fast; the page helper
// finds the Chromium it reports; a missing package is installed with apt-get in one go, and a
// package that cannot be installed fails the run with one line saying why. Chromium is never
// uninstalled here: the "missing" cases run the real script with a PATH that lacks it and an
// apt-get in front that stands in for Debian's.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pathWithout } from '../helpers/fake-path.js';
import { findChromium } from '../helpers/page.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { prepareTestTools, TEST_TOOLS_SCRIPT } from '../helpers/test-tools.js';

const run = promisify(execFile);

/** The script's report as tool → what it said (`chromium` → `/usr/bin/chromium`). */
function reportOf(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const at = line.indexOf(': ');
        return [line.slice(0, at), line.slice(at + 2)];
      }),
  );
}

async function script(env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await run('bash', [TEST_TOOLS_SCRIPT], { cwd: ROOT, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('.ci/test-tools', () => {
  it('reports each tool present, changes nothing, and costs well under a second, twice in a row', async () => {
    for (let i = 0; i < 2; i += 1) {
      const started = Date.now();
      const { code, stdout, stderr } = await script(process.env);
      const took = Date.now() - started;
      expect(stderr, 'nothing to install or start').toBe('');
      expect(code).toBe(0);
      const report = reportOf(stdout);
      expect(Object.keys(report)).toEqual([
        'chromium',
        'runsc',
        'docker-registry',
        'ip',
        'docker engine',
        'base image',
        'older base image',
        'newer base image',
      ]);
      for (const tool of ['chromium', 'runsc', 'docker-registry', 'ip']) {
        expect(report[tool], tool).toMatch(new RegExp(`^/.*/${tool}$`));
      }
      expect(report['docker engine']).toBe('answers, runsc registered');
      expect(report['base image']).toBe('debian:bookworm-slim');
      expect(report['newer base image']).toBe('debian:trixie-slim');
      expect(took).toBeLessThan(1000);
    }
    // What it says is so: the engine lists runsc.
    const { stdout } = await run('docker', ['info', '--format', '{{json .Runtimes}}']);
    expect(Object.keys(JSON.parse(stdout) as object)).toContain('runsc');
  });

  it('reports the Chromium the page helper finds, and that Chromium starts', async () => {
    const report = reportOf(prepareTestTools());
    const found = findChromium();
    expect(found).toBe(report['chromium']);
    const browser = await chromium.launch({
      executablePath: found as string,
      args: ['--no-sandbox'],
    });
    try {
      expect(browser.version()).toMatch(/^\d+\./);
    } finally {
      await browser.close();
    }
    expect(findChromium(tempDir())).toBeUndefined();
  });

  it('installs a missing package with apt-get (update, then one install) and reports it', async () => {
    // The stand-in apt-get "installs" chromium by putting a program of that name on PATH.
    const { bin, path } = pathWithout(
      ['chromium'],
      'case "$*" in "install -y -qq chromium") ln -s /bin/true "$BIN/chromium" ;; esac',
    );
    const { code, stdout, stderr } = await script({ ...process.env, PATH: path });
    expect(stderr.trim()).toBe("test-tools: installing Debian's chromium");
    expect(code).toBe(0);
    expect(readFileSync(join(bin, 'apt.log'), 'utf8')).toBe(
      'update -qq\ninstall -y -qq chromium\n',
    );
    expect(reportOf(stdout)['chromium']).toBe(join(bin, 'chromium'));
    // Present now: a second run installs nothing.
    const again = await script({ ...process.env, PATH: path });
    expect(again.stderr).toBe('');
    expect(readFileSync(join(bin, 'apt.log'), 'utf8').split('\n')).toHaveLength(3);
  });

  it("fails the run with one line naming the packages and apt-get's reason when it cannot install them", async () => {
    const { path } = pathWithout(
      ['chromium', 'docker-registry'],
      'case "$1" in install) echo "E: Unable to locate package chromium" >&2; exit 100 ;; esac',
    );
    const env = { ...process.env, PATH: path };
    const { code, stdout, stderr } = await script(env);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n').at(-1)).toBe(
      'test-tools: could not install chromium docker-registry with apt-get: E: Unable to locate package chromium',
    );
    // As the global setup sees it: one error with the reason, and the run stops.
    expect(() => prepareTestTools(env)).toThrow(
      /^the tests' tools could not be prepared \(\.ci\/test-tools\): could not install chromium docker-registry with apt-get: E: Unable to locate package chromium$/,
    );
  });

  it('says installing needs root when it runs as another user without sudo', async () => {
    const { bin, path } = pathWithout(['chromium', 'sudo'], 'exit 0');
    chmodSync(bin, 0o755);
    // nobody, with no groups: as a user without root or sudo would run `npm test`.
    const { code, stdout, stderr } = await run(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', 'bash', TEST_TOOLS_SCRIPT],
      { cwd: ROOT, env: { PATH: path } },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe(
      'test-tools: chromium missing, and installing needs root: run as root, or give this user password-less sudo, or apt-get install chromium',
    );
    expect(existsSync(join(bin, 'apt.log'))).toBe(false);
  });
});
