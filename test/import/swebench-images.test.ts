// SWE-bench rows on prebuilt images, end to end: an image laid out as SWE-bench's are (the
// project at /testbed at its base commit with its own history, installed in develop mode into
// a Python environment at /opt/miniconda3/envs/testbed that Debian's python3 does not see, run
// as root) is pushed to a real registry on 127.0.0.1; `proctor import swebench rows.parquet
// --images TEMPLATE` pins each row's image by digest with no Dockerfile and no repository, and
// `proctor baseline --gold --wait` pulls it and finds the task valid, its tests run on the
// environment's interpreter. A row whose image's HEAD is not its base_commit is quarantined,
// naming both; one whose image the registry lacks is skipped at import, in one line.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/index.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { writeRowsParquet } from '../helpers/parquet.js';
import { dockerCli, startRegistry } from '../helpers/registry.js';
import {
  erringBaseline,
  pushAsInstances,
  srcCalcImage,
  sweName,
} from '../helpers/swebench-layout.js';
import { tempDir } from '../helpers/temp.js';

/** The repository's row, and an image of it at the base commit, tagged locally. */
async function swebenchImage() {
  const root = tempDir('proctor-images-');
  const made = await srcCalcImage(root, 'proctor-test-swebench-layout');
  return { root, ...made };
}

describe('proctor import swebench --images', { timeout: 900_000 }, () => {
  it('refuses an unknown convention or placeholder, and --images with --repos, in one line (exit 2)', async () => {
    const root = tempDir('proctor-images-');
    const rows = join(root, 'rows.jsonl');
    writeFileSync(rows, '');
    const out = join(root, 'suite');
    const cases: Array<[string[], string]> = [
      [
        ['--images', 'swe-bench'],
        '--images swe-bench: not a known convention (swebench, epoch) nor a template with a placeholder ({instance_id}, {instance_id_1776}, {repo}, {arch}, {version})',
      ],
      [
        ['--images', 'r/{nope}'],
        '--images r/{nope}: unknown placeholder {nope}; the placeholders are {instance_id}, {instance_id_1776}, {repo}, {arch}, {version}',
      ],
      [
        ['--images', 'swebench', '--repos', root],
        "--images takes each row's repository and environment from its image; drop --repos",
      ],
      [['--environment', root], '--repos is needed (or --images, for prebuilt images)'],
    ];
    for (const [args, message] of cases) {
      const result = await proctor(['import', 'swebench', rows, ...args, '--out', out]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(`proctor: ${message}\n`);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(out)).toBe(false);
  });

  it('pins each row to its image by digest, and baseline --gold pulls it and finds the task valid', async () => {
    const { root, tag, row, fix } = await swebenchImage();
    const { host } = await startRegistry();
    const name = (id: string) => sweName(host, id);
    // The same image for a row that says another base commit; only the registry has them.
    const digest = await pushAsInstances(tag, host, ['acme__calc-1', 'acme__calc-2']);
    const rows = join(root, 'test-00000-of-00001.parquet');
    writeRowsParquet(rows, [
      row,
      { ...row, instance_id: 'acme__calc-2', base_commit: fix },
      { ...row, instance_id: 'acme__calc-3' },
    ]);
    const out = join(root, 'suite');
    const template = `${host}/swebench/sweb.eval.{arch}.{instance_id_1776}`;
    const imported = await proctor([
      'import',
      'swebench',
      rows,
      '--images',
      template,
      '--out',
      out,
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(1);
    expect(imported.stdout).toMatch(
      new RegExp(
        `written\\s+acme__calc-1 {2}row 1 \\(acme__calc-1\\) {2}runner pytest \\([^)]*\\)[^\\n]*environment image ${name('acme__calc-1').replaceAll('.', '\\.')}@${digest}`,
      ),
    );
    expect(imported.stdout).toContain(
      `skipped row 3 (acme__calc-3): image ${name('acme__calc-3')}: the registry refused: `,
    );
    expect(imported.stdout).toContain('2 written, 0 rewritten, 0 unchanged, 1 skipped');

    // No Dockerfile, no snapshot: the image, its work tree and the interpreter of its tests.
    const bundle = join(out, 'acme__calc-1');
    expect(existsSync(join(bundle, 'environment'))).toBe(false);
    const task = readFileSync(join(bundle, 'task.toml'), 'utf8');
    expect(task).toContain(`image = "${name('acme__calc-1')}@${digest}"`);
    expect(task).toContain('workdir = "/testbed"');
    expect(task).toContain(`base_commit = "${row.base_commit}"`);
    expect(task).toContain('RUNNER_PYTHON = "/opt/miniconda3/envs/testbed/bin/python"');
    await loadBundle(bundle);

    const home = tempDir('proctor-home-');
    const valid = await proctor(['--home', home, 'baseline', bundle, '--gold', '--wait']);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/1 valid, 0 quarantined/);
    // Pulled by digest: the engine now holds the pinned manifest.
    const pulled = await dockerCli('image', 'inspect', '--format', '{{json .RepoDigests}}', tag);
    expect(pulled).toContain(`@${digest}`);

    // The job errs (not judged: the image is not the task it claims), naming both commits.
    const status = await erringBaseline(home, join(out, 'acme__calc-2'), 'acme__calc-2');
    // --images writes setup_commit: a HEAD that is neither the base nor one commit on it.
    expect(status).toContain(
      `HEAD of /testbed is ${row.base_commit}, neither the base commit ${fix} nor one setup commit on it`,
    );
    expect(await leftovers(home)).toEqual([]);
  });
});
