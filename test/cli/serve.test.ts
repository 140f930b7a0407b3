// `proctor serve`: the API, page and workers in one process on 127.0.0.1; other addresses
// are refused; SIGTERM drains and exits 0.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slowBundles } from '../helpers/bundles.js';
import { proctor } from '../helpers/cli.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

describe('proctor serve', () => {
  it('serves the API and page on 127.0.0.1 and drains on SIGTERM', async () => {
    const home = tempDir();
    const server = spawnTs(join(ROOT, 'bin/proctor.js'), ['--home', home, 'serve', '--port', '0']);
    await waitFor(() => /serving http:\/\/127\.0\.0\.1:\d+\//.test(server.stderr()), {
      what: 'the server to listen',
      timeoutMs: 30_000,
    });
    const port = /127\.0\.0\.1:(\d+)/.exec(server.stderr())?.[1] ?? '';
    const batches = await fetch(`http://127.0.0.1:${port}/api/batches`);
    expect(batches.status).toBe(200);
    expect(await batches.json()).toEqual({ items: [], nextCursor: null });
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    server.process.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(server.stderr()).toContain('workers drained');
  }, 60_000);

  it('ends within its grace period after SIGTERM, even with slow requests in flight', async () => {
    const home = tempDir();
    const tasks = join(home, 'tasks');
    mkdirSync(tasks);
    // Each request names forty bundles that take a third of a second each to read.
    const names = slowBundles(tasks, 40);
    writeFileSync(join(home, 'proctor.toml'), `tasks_root = ${JSON.stringify(tasks)}\n`);
    const server = spawnTs(join(ROOT, 'bin/proctor.js'), [
      '--home',
      home,
      'serve',
      '--port',
      '0',
      '--grace',
      '2',
    ]);
    await waitFor(() => /serving http:\/\/127\.0\.0\.1:\d+\//.test(server.stderr()), {
      what: 'the server to listen',
      timeoutMs: 30_000,
    });
    const port = /127\.0\.0\.1:(\d+)/.exec(server.stderr())?.[1] ?? '';
    const cpuTicks = () => {
      const fields = readFileSync(`/proc/${server.process.pid}/stat`, 'utf8').split(') ')[1];
      const [utime, stime] = (fields ?? '').split(' ').slice(11, 13).map(Number);
      return (utime ?? 0) + (stime ?? 0);
    };
    const idle = cpuTicks();
    const body = JSON.stringify({ jobs: names.map((bundle) => ({ kind: 'baseline', bundle })) });
    const requests = Array.from({ length: 4 }, () =>
      fetch(`http://127.0.0.1:${port}/api/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).catch(() => undefined),
    );
    // A second of CPU spent on the requests: they are being worked on.
    await waitFor(() => cpuTicks() > idle + 100, { what: 'the server to work on the requests' });
    const signalled = Date.now();
    server.process.kill('SIGTERM');
    const exited = await Promise.race([
      server.exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000).unref()),
    ]);
    expect(exited, 'the server was still running 15 s after SIGTERM').toBeDefined();
    // The grace (2 s) plus room for a loaded machine, where one step of a request's work (a
    // bundle read, about 1/3 s of CPU) can take seconds: far below the ~50 s of CPU the four
    // requests would take if they ran on. Idle, it ends in about 0.8 s.
    expect(Date.now() - signalled).toBeLessThan(2_000 + 6_000);
    expect(exited?.code).toBe(0);
    await Promise.all(requests);
  }, 90_000);

  it('refuses any address but 127.0.0.1, exit 2', async () => {
    const result = await proctor([
      '--home',
      tempDir(),
      'serve',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/127\.0\.0\.1 only/);
  }, 60_000);
});
