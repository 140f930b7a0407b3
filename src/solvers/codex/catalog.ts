// The model catalog codex is given for the profile's model: without an entry for its slug,
// codex emits a "no local metadata" notice on every run (the research's fix is a catalog
// entry cloned from a bundled model). Listing the bundled models costs a codex start, so the
// base entry is read once per catalog and shared by every run that holds it. The catalog is
// made by whoever owns the worker pool (the runtime) and passed to runCodex, so that its
// lifetime is the pool's and no module state survives between runtimes or tests.
import type { Deadline } from '../deadline.js';
import { preflight } from './process.js';

/** How to start codex for `codex debug models --bundled`. */
export interface CatalogSource {
  binary: string;
  env: Record<string, string>;
  cwd: string;
  deadline: Deadline;
}

export interface ModelCatalog {
  /** The catalog entry for `model`, read from codex's bundled list on first use. */
  entryFor(model: string, source: CatalogSource): Promise<Record<string, unknown>>;
}

/** The bundled model the entry is cloned from (else the first one listed). */
const BASE_SLUG = 'gpt-5.5';

export function createModelCatalog(): ModelCatalog {
  let base: Promise<Record<string, unknown>> | undefined;
  const readBase = (source: CatalogSource): Promise<Record<string, unknown>> => {
    if (base) return base;
    const reading = (async () => {
      const { binary, env, cwd, deadline } = source;
      const listed = await preflight(binary, ['debug', 'models', '--bundled'], env, cwd, deadline);
      const models = (JSON.parse(listed.stdout) as { models: Array<Record<string, unknown>> })
        .models;
      const found = models.find((m) => m['slug'] === BASE_SLUG) ?? models[0];
      if (!found) throw new Error('codex lists no bundled models');
      return found;
    })();
    base = reading;
    // A failed read (a killed preflight, a codex that printed no JSON) is tried again next run.
    reading.catch(() => {
      if (base === reading) base = undefined;
    });
    return reading;
  };
  return {
    async entryFor(model, source) {
      return {
        ...(await readBase(source)),
        slug: model,
        upgrade: null,
        supports_search_tool: false,
        apply_patch_tool_type: null,
      };
    },
  };
}
