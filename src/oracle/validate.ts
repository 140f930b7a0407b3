// The static checks of bundles and suites: format 1, paths and limits, every problem with its
// file and key. Nothing here runs Docker, so the API can answer them within its request; the
// image and base commit are checked by validate-image.ts, in a validate job or the CLI.
import { describeError, isProctorError } from '../errors.js';
import { loadSuite, type Bundle, type LoadBundleOptions } from './bundle.js';

/** The outcome of the static checks of one bundle folder. */
export type StaticResult =
  | { ok: true; dir: string; id: string; bundle: Bundle }
  | { ok: false; dir: string; id?: string; problems: string[] };

/** Each problem of a failure as one line: `file: key: message` for a malformed bundle. */
export function problemsOf(error: unknown): string[] {
  if (isProctorError(error, 'BUNDLE_INVALID')) {
    const problems = (error.data?.['problems'] ?? []) as Array<{
      file: string;
      key?: string;
      message: string;
    }>;
    if (problems.length > 0)
      return problems.map((p) => `${p.file}: ${p.key ? `${p.key}: ` : ''}${p.message}`);
  }
  return [describeError(error)];
}

/**
 * Runs the static checks of every bundle under each path (a bundle or a suite), in order: a
 * path that cannot be read at all gives one failed result, a suite one result per bundle,
 * the broken ones first.
 */
export async function checkStatic(
  paths: readonly string[],
  options: LoadBundleOptions = {},
): Promise<StaticResult[]> {
  const results: StaticResult[] = [];
  for (const path of paths) {
    let suite;
    try {
      suite = await loadSuite(path, options);
    } catch (error) {
      // A bundle's own problems are its result; a refused request (too many bundles) is not.
      if (!isProctorError(error, 'BUNDLE_INVALID')) throw error;
      results.push({ ok: false, dir: path, problems: problemsOf(error) });
      continue;
    }
    for (const { dir, error } of suite.problems)
      results.push({ ok: false, dir, problems: problemsOf(error) });
    for (const bundle of suite.bundles)
      results.push({ ok: true, dir: bundle.dir, id: bundle.id, bundle });
  }
  return results;
}
