import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Three files at a time on two cores: many files wait on the engine, on a worker's lease or
    // on a scripted model (a run of six such files kept the CPU 61 % busy with two at a time,
    // and took 20 % less wall with three); more would starve the files that build and run
    // containers: in a full run with four at a time, its first 161 files took 40 % longer each
    // (6,248 s summed, against 4,454 s with three), more than the fourth worker gave back.
    fileParallelism: true,
    maxWorkers: 3,
    minWorkers: 1,
  },
});
