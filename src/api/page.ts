// The status page's static files, for the API to serve at `/`, `/style.css` and `/<module>.js`
// (the page's ES modules, each importing the others by relative URL, so all from the same
// origin as the CSP requires). They are plain files with no build step, kept in src/api/page/. tsc copies
// nothing but TypeScript, so rather than copy them into dist/ (a second, possibly stale copy)
// this module always reads them from src/api/page/ under the project root (src/paths.ts),
// whether it runs from src/, dist/ or the bin's bundle.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProctorError, describeError } from '../errors.js';
import { projectPath } from '../paths.js';

export interface PageAsset {
  body: string;
  contentType: string;
}

/** `<project>/src/api/page/`. */
export const PAGE_FOLDER = projectPath('src', 'api', 'page') + '/';

/** The page's ES modules: app.js is the entry point, the others are what it imports. */
export const PAGE_MODULES = [
  'against.js',
  'app.js',
  'baseline.js',
  'batches.js',
  'chart.js',
  'client.js',
  'compare.js',
  'dom.js',
  'format.js',
  'job.js',
  'jobs.js',
  'results.js',
  'state.js',
  'trajectory.js',
  'verdict.js',
] as const;

/** Route → file name and content type. */
const FILES: ReadonlyArray<readonly [route: string, file: string, contentType: string]> = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ['/style.css', 'style.css', 'text/css; charset=utf-8'],
  ...PAGE_MODULES.map((file) => [`/${file}`, file, 'text/javascript; charset=utf-8'] as const),
];

/**
 * The page's files keyed by route ('/', '/style.css', '/app.js', …), read now: call it
 * once when building the app. `folder` defaults to PAGE_FOLDER. A missing file is an
 * INTERNAL error naming it (a broken checkout), raised at start-up rather than per request.
 */
export function pageAssets(folder: string = PAGE_FOLDER): Map<string, PageAsset> {
  const assets = new Map<string, PageAsset>();
  for (const [route, file, contentType] of FILES) {
    const path = join(folder, file);
    let body: string;
    try {
      body = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ProctorError(
        'INTERNAL',
        `cannot read the status page file ${path}: ${describeError(error)}`,
        { cause: error },
      );
    }
    assets.set(route, { body, contentType });
  }
  return assets;
}
