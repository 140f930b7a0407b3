// The test IDs tasks declare (existing and hidden), by bundle folder, for a report that
// compares per-test outcomes (`report --against`). A bundle that no longer loads maps to null:
// the comparison says so for its instance rather than failing the whole report.
import { loadBundle, type LoadBundleOptions } from './bundle.js';

export interface DeclaredTestIds {
  existing: string[];
  hidden: string[];
}

export async function declaredTestIds(
  bundles: Iterable<string>,
  options: LoadBundleOptions = {},
): Promise<Map<string, DeclaredTestIds | null>> {
  const out = new Map<string, DeclaredTestIds | null>();
  for (const dir of bundles) {
    if (out.has(dir)) continue;
    const bundle = await loadBundle(dir, options).catch(() => null);
    out.set(
      dir,
      bundle === null ? null : { existing: bundle.existingIds, hidden: bundle.hiddenIds },
    );
  }
  return out;
}
