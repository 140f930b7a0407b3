// `proctor serve`: the API, page and workers in one process on 127.0.0.1; other addresses
// are refused; SIGTERM drains and exits 0.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
