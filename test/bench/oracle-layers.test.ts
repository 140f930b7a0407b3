// bench:oracle's pure parts: part (d)'s layers-off runner (on the real built-in runners and
// examples), the medians, the round order and the per-dialect table; part (a)'s reading of the
// raw script's reports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  layerRow,
  layerTable,
  median,
  plainRunner,
  rawFailures,
  roundOrder,
  type GradeSample,
} from '../../bench/oracle-layers.js';
import { runnerPlacesCanaries } from '../../src/oracle/canaries.js';
import { jsCanaryDialect } from '../../src/oracle/js-canary-step.js';
import { runnerProtocol } from '../../src/oracle/protocol.js';
import { BUILTIN_RUNNERS, runnerSource } from '../../src/runners/index.js';

const EXAMPLES = join(import.meta.dirname, '../../examples');

describe('plainRunner', () => {
  it.each(BUILTIN_RUNNERS)(
    'takes the layers off the built-in %s runner and nothing else',
    async (name) => {
      const runner = await runnerSource(name);
      expect(runnerProtocol(runner)).toBe(2);
      const plain = plainRunner(runner);
      expect(runnerProtocol(plain)).toBe(1);
      expect(runnerPlacesCanaries(plain)).toBe(false);
      expect(jsCanaryDialect(plain)).toBeNull();
      // Only the marker lines are gone: every other line is there, in order.
      const kept = runner
        .toString('utf8')
        .split('\n')
        .filter((l) => !/^(?:#|\/\/) proctor-(?:runner-protocol|canaries):/.test(l));
      expect(plain.toString('utf8').split('\n')).toEqual(kept);
      const canaryLine =
        jsCanaryDialect(runner) !== null
          ? `# proctor-canaries: js-${jsCanaryDialect(runner)}\n`
          : runnerPlacesCanaries(runner)
            ? '# proctor-canaries: 1\n'
            : '';
      expect(runner.length - plain.length).toBe(
        '# proctor-runner-protocol: 2\n'.length + canaryLine.length,
      );
    },
  );

  it('refuses a runner that speaks protocol 1 (the shell example), with a clear error', () => {
    const runner = readFileSync(join(EXAMPLES, 'sh-country-codes/tests/run'));
    expect(() => plainRunner(runner)).toThrow(
      'the runner does not speak protocol 2: it has no layers to take off',
    );
  });

  it('takes off markers written with CRLF and with trailing blanks', () => {
    const runner = Buffer.from(
      '#!/bin/sh\r\n# proctor-runner-protocol: 2 \r\n# proctor-canaries: 1\t\r\necho\r\n',
    );
    expect(plainRunner(runner).toString()).toBe('#!/bin/sh\r\necho\r\n');
  });

  it('refuses a runner whose marker it cannot take off (the last line, with no newline)', () => {
    const runner = Buffer.from('#!/bin/sh\necho\n# proctor-runner-protocol: 2');
    expect(() => plainRunner(runner)).toThrow(
      'the runner still reads as protocol 2 or placing canaries without its markers',
    );
  });
});

describe('median', () => {
  it('is the middle value of an odd count and the mean of the middle two of an even one', () => {
    expect(median([30, 10, 20])).toBe(20);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('refuses no values and values that are not finite numbers', () => {
    expect(() => median([])).toThrow('the median of no values');
    expect(() => median([1, NaN])).toThrow('not a finite number');
    expect(() => median([1, Infinity])).toThrow('not a finite number');
  });
});

describe('roundOrder', () => {
  it('swaps the order each round', () => {
    expect([0, 1, 2, 3].map(roundOrder)).toEqual([
      ['on', 'off'],
      ['off', 'on'],
      ['on', 'off'],
      ['off', 'on'],
    ]);
  });
});

const sample = (ms: number, timings: Record<string, number>): GradeSample => ({ ms, timings });

describe('layerRow', () => {
  it('takes medians of the grades and of each step, a missing step counting 0', () => {
    const on = [
      sample(1100, { existing: 400, hidden: 300, canaries: 100, collect: 20, total: 900 }),
      sample(1000, { existing: 380, hidden: 320, canaries: 90, collect: 30, total: 880 }),
      sample(1300, { existing: 420, hidden: 310, canaries: 120, collect: 10, total: 950 }),
    ];
    const off = [
      sample(950, { existing: 370, hidden: 250, collect: 20, total: 700 }),
      sample(900, { existing: 380, hidden: 260, collect: 20, total: 720 }),
      sample(1000, { existing: 390, hidden: 240, collect: 20, total: 710 }),
    ];
    const row = layerRow('py-duration-parse', 'pytest', on, off);
    expect(row.on).toBe(1100);
    expect(row.off).toBe(950);
    expect(row.diff).toBe(150);
    expect(row.share).toBeCloseTo(150 / 1100, 10);
    expect(row.met).toBe(false);
    // `total` is not a step; largest difference first, ties by name.
    expect(row.steps).toEqual([
      { step: 'canaries', on: 100, off: 0, diff: 100 },
      { step: 'hidden', on: 310, off: 250, diff: 60 },
      { step: 'existing', on: 400, off: 380, diff: 20 },
      { step: 'collect', on: 20, off: 20, diff: 0 },
    ]);
  });

  it('meets the target at 10 % exactly and misses it above', () => {
    expect(layerRow('e', 'go', [sample(1000, {})], [sample(900, {})]).met).toBe(true);
    expect(layerRow('e', 'go', [sample(1000, {})], [sample(899, {})]).met).toBe(false);
    // Layers that cost nothing (or less than nothing, in noise) meet it.
    expect(layerRow('e', 'go', [sample(900, {})], [sample(1000, {})]).met).toBe(true);
  });

  it('refuses sides of different counts, and no grades', () => {
    expect(() => layerRow('e', 'go', [sample(1, {})], [])).toThrow(
      'e: 1 grades with the layers and 0 without',
    );
    expect(() => layerRow('e', 'go', [], [])).toThrow('e: 0 grades with the layers and 0 without');
  });
});

describe('layerTable', () => {
  it('prints a row per example: times, difference, share, the target and the top steps', () => {
    const row = layerRow(
      'go-text-ellipsis',
      'go',
      [sample(5000, { hidden: 2000, existing: 1900, collect: 300, apply: 50 })],
      [sample(4700, { hidden: 1800, existing: 1800, collect: 350, apply: 50.4 })],
    );
    expect(layerTable([row])).toEqual([
      'example\tdialect\ton ms\toff ms\tdiff ms\tshare\ttarget ≤ 10 %\tsteps (on − off, ms)',
      'go-text-ellipsis\tgo\t5000\t4700\t+300\t6.0 %\tmet\thidden +200, existing +100, collect −50',
    ]);
  });

  it('says none when no step differs by a millisecond', () => {
    const row = layerRow(
      'e',
      'node',
      [sample(1000, { hidden: 5 })],
      [sample(1200, { hidden: 5.5 })],
    );
    expect(layerTable([row])[1]).toBe('e\tnode\t1000\t1200\t−200\t-20.0 %\tmet\tnone');
  });
});

describe('rawFailures', () => {
  const report = (tests: Array<[string, string]>, cause?: string) =>
    JSON.stringify(
      {
        schema: 1,
        tests: tests.map(([id, status]) => ({ id, status })),
        ...(cause === undefined ? {} : { cause }),
      },
      null,
      1,
    );

  it('is empty when every test of every report passed', () => {
    const stdout = `existing: ${report([['a', 'passed']])}\nhidden: ${report([['b', 'passed']])}\n`;
    expect(rawFailures(stdout)).toBe('');
    expect(rawFailures(`tests: ${report([['a', 'passed']])}\n`)).toBe('');
  });

  it("names each test not passed, and a report's cause, by phase", () => {
    // What the script printed for a task with an install when it ran on a clone without the
    // install's build: every test an error, and why.
    const stdout = [
      `existing: ${report([['Split.Simple', 'error']], 'no CMake build in /repo')}`,
      `hidden: ${report([
        ['Join.UndoesSplit', 'failed'],
        ['Split.Tab', 'passed'],
      ])}`,
      '',
    ].join('\n');
    expect(rawFailures(stdout)).toBe(
      'existing: no CMake build in /repo; existing: Split.Simple error; hidden: Join.UndoesSplit failed',
    );
  });

  it('says so for a phase with no report, and for output with none at all', () => {
    expect(rawFailures(`existing: (no report)\nhidden: ${report([['b', 'passed']])}\n`)).toBe(
      'existing: no report',
    );
    expect(rawFailures('')).toBe('no report');
  });
});
