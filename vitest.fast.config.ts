// For quick runs of single test files while developing: no global build of dist/ first, so
// CLI tests (which run bin/proctor.js) may see a stale build. `npm test` uses vitest.config.ts.
// (Not mergeConfig: it concatenates arrays, so the build would still run.)
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({ ...base, test: { ...base.test, globalSetup: [] } });
