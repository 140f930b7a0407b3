// The codex model catalog against the real pinned Codex CLI: the entry is cloned from a
// bundled model and renamed, the bundled list is read once per catalog (a later run whose
// deadline is already spent still gets it), catalogs do not share it (no module state), and a
// failed read is tried again.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexBinary } from '../../src/solvers/codex/binary.js';
import { createModelCatalog, type CatalogSource } from '../../src/solvers/codex/catalog.js';
import { createDeadline } from '../../src/solvers/index.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

/** Where codex may run: a private home and working directory, and a deadline of `ms`. */
function source(ms: number): CatalogSource {
  const root = tempDir('proctor-catalog-');
  const home = join(root, 'home');
  const cwd = join(root, 'cwd');
  mkdirSync(home);
  mkdirSync(cwd);
  const deadline = createDeadline(ms);
  onCleanup(() => deadline.dispose());
  return {
    binary: codexBinary(),
    env: { PATH: '/usr/bin:/bin', HOME: home, CODEX_HOME: home },
    cwd,
    deadline,
  };
}

describe('the codex model catalog', () => {
  it('clones a bundled model for the profile model, without search or upgrades', async () => {
    const entry = await createModelCatalog().entryFor('proctor-test-model', source(30_000));
    expect(entry).toMatchObject({
      slug: 'proctor-test-model',
      upgrade: null,
      supports_search_tool: false,
      apply_patch_tool_type: null,
    });
    expect(Object.keys(entry).length).toBeGreaterThan(5);
  }, 60_000);

  it('reads the bundled list once per catalog, and never shares it between catalogs', async () => {
    const catalog = createModelCatalog();
    const first = await catalog.entryFor('a', source(30_000));
    // A spent deadline kills any codex at once, so only the cached list can answer.
    const second = await catalog.entryFor('b', source(0));
    expect({ ...second, slug: 'a' }).toEqual(first);
    await expect(createModelCatalog().entryFor('c', source(0))).rejects.toThrow();
  }, 60_000);

  it('tries a failed read again on the next run', async () => {
    const catalog = createModelCatalog();
    await expect(catalog.entryFor('a', source(0))).rejects.toThrow();
    expect(await catalog.entryFor('a', source(30_000))).toMatchObject({ slug: 'a' });
  }, 60_000);
});
