// For quick runs of single test files while developing: no global build of dist/ first, so
// CLI tests (which run bin/proctor.js) may see a stale build. `npm test` uses vitest.config.ts.
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(base, defineConfig({ test: { globalSetup: [] } }));
