import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Child-process tests share two cores; keep files from starving each other.
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
