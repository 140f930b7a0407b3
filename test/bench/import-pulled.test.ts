// bench:import --pulled's re-layout of a built environment image as SWE-bench's published
// images are: built here from a catalog-like image (a venv first on PATH, a work tree that is
// not the row's history), pushed to a real registry on 127.0.0.1, then pulled and looked at.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCH_LABEL, relayAsSweBench } from '../../bench/import-pulled.js';
import { dockerCli, startRegistry } from '../helpers/registry.js';
import { DEVELOP_INSTALL, srcCalcRepo, testbedImage } from '../helpers/swebench-layout.js';
import { tempDir } from '../helpers/temp.js';

// As the catalog's environments are: Debian's Python in a venv at /opt/venv, first on PATH.
const CATALOG_LIKE = [
  'FROM proctor-test-testbed-tools:latest',
  'RUN python3 -m venv --system-site-packages /opt/venv',
  'ENV PATH=/opt/venv/bin:$PATH',
  'COPY testbed /testbed',
  '',
].join('\n');

describe('bench:import --pulled re-lays a built image out', { timeout: 600_000 }, () => {
  it('as SWE-bench does: its own clone at /testbed, the install committed on base_commit, only in the registry', async () => {
    const root = tempDir('proctor-relay-');
    const made = srcCalcRepo(join(root, 'repo'));
    // The built image's /testbed is at the fix: the re-layout must replace it, not build on it.
    const built = await testbedImage(root, made.repo, made.fix, CATALOG_LIKE, 'proctor-test-relay');
    const { host } = await startRegistry();
    const relaid = await relayAsSweBench({
      builtImage: built,
      mirror: made.repo,
      instanceId: 'acme__calc-1',
      baseCommit: made.base,
      install: DEVELOP_INSTALL,
      workdir: root,
      host,
    });
    expect(relaid.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Only the registry has it: a grade would have to pull it.
    await expect(dockerCli('image', 'inspect', relaid.name)).rejects.toThrow(/No such image/i);
    const pulled = `${relaid.name.replace(/:latest$/, '')}@${relaid.digest}`;
    await dockerCli('pull', '-q', pulled);
    const labels = await dockerCli(
      'image',
      'inspect',
      '--format',
      '{{json .Config.Labels}}',
      pulled,
    );
    expect(labels).toContain('"proctor.bench":"import"');
    expect(BENCH_LABEL).toBe('proctor.bench=import');
    const out = await dockerCli(
      'run',
      '--rm',
      '--label',
      BENCH_LABEL,
      '--network',
      'none',
      pulled,
      'sh',
      '-c',
      [
        'cd /testbed',
        'echo "parent $(git rev-parse HEAD^)"',
        'echo "parents $(git rev-list --parents -n1 HEAD | wc -w)"',
        'echo "subject $(git log -1 --format=%s)"',
        'echo "remotes $(git remote | wc -l)"',
        'echo "module $(cd / && /opt/miniconda3/envs/testbed/bin/python -c "import calc; print(calc.__file__)")"',
      ].join(' && '),
    );
    expect(out).toContain(`parent ${made.base}`);
    expect(out).toContain('parents 2');
    expect(out).toContain('subject SWE-bench');
    expect(out).toContain('remotes 0');
    expect(out).toContain('module /testbed/src/calc/__init__.py');
  });

  it('refuses a missing repository in one line naming it', async () => {
    const root = tempDir('proctor-relay-');
    const missing = join(root, 'no-such-mirror');
    await expect(
      relayAsSweBench({
        builtImage: 'debian:bookworm-slim',
        mirror: missing,
        instanceId: 'acme__calc-1',
        baseCommit: '0'.repeat(40),
        install: undefined,
        workdir: root,
        host: '127.0.0.1:1',
      }),
    ).rejects.toThrow(`no repository at ${missing} to clone into /testbed`);
  });
});
