// What --wait prints about pulls (pure): a pull's first figures, new ones at most every 10 s,
// nothing while they stand still, and its end; and a recorded document read back, where a
// malformed one (a worker's bytes are data, not trusted) is no pull at all.
import { describe, expect, it } from 'vitest';
import { createPullLines } from '../../src/cli/pulls.js';
import { pullText } from '../../src/results/pulls.js';
import {
  progressDocument,
  readProgressDocument,
  type PullProgressDocument,
} from '../../src/pull-progress.js';

const doc = (bytes: number): PullProgressDocument =>
  progressDocument({
    image: 'r/x@sha256:1',
    bytes,
    totalBytes: 4_000_000,
    layersDone: 0,
    layers: 1,
    bytesPerSecond: 1_000_000,
    etaSeconds: Math.round((4_000_000 - bytes) / 1_000_000),
    startedAt: 0,
    updatedAt: 0,
  });

describe('pull lines of --wait', () => {
  it('tells a pull once as it starts, again at most every 10 s while it moves, and its end', () => {
    const lines = createPullLines(10_000);
    expect(lines(new Map([[7, doc(0)]]), 0)).toEqual([
      'job 7 pulling r/x@sha256:1: 0.0 MB of 4.0 MB, 1.0 MB/s, ETA 4s (layers 0/1)',
    ]);
    expect(lines(new Map([[7, doc(1_000_000)]]), 5_000)).toEqual([]);
    expect(lines(new Map([[7, doc(2_000_000)]]), 10_000)).toEqual([
      'job 7 pulling r/x@sha256:1: 2.0 MB of 4.0 MB, 1.0 MB/s, ETA 2s (layers 0/1)',
    ]);
    // Standing still says nothing, however long.
    expect(lines(new Map([[7, doc(2_000_000)]]), 60_000)).toEqual([]);
    expect(lines(new Map(), 61_000)).toEqual(['job 7 pull of r/x@sha256:1 ended']);
    expect(lines(new Map(), 62_000)).toEqual([]);
  });

  it('reads back a recorded pull, and takes a malformed or foreign document for none', () => {
    const text = JSON.stringify(doc(1_000_000));
    expect(readProgressDocument(text)).toEqual(doc(1_000_000));
    expect(pullText(doc(1_000_000))).toBe(
      'pulling r/x@sha256:1: 1.0 MB of 4.0 MB, 1.0 MB/s, ETA 3s (layers 0/1)',
    );
    for (const bad of [
      'not json',
      'null',
      '[]',
      JSON.stringify({ ...doc(1), kind: 'build' }),
      JSON.stringify({ ...doc(1), bytes: -1 }),
      JSON.stringify({ ...doc(1), bytes: '1' }),
      JSON.stringify({ ...doc(1), image: 3 }),
      JSON.stringify({ ...doc(1), etaSeconds: 'soon' }),
    ]) {
      expect(readProgressDocument(bad)).toBeUndefined();
    }
  });
});
