import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Four files at a time on two cores: many files wait on the engine, on a worker's lease, on
    // a browser or on a scripted model (a run of six such files kept the CPU 61 % busy with two
    // at a time, and took 20 % less wall with three; seven such files, karma's, wait's and
    // image-pulls' among them, took 362 s with three at a time, the CPU 23 % idle, and 260 s
    // with four, 15 % idle).
    fileParallelism: true,
    maxWorkers: 4,
    minWorkers: 1,
  },
});
