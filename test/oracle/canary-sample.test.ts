// The canary step's ID list: every hidden test, then a random sample of the existing tests
// that are not hidden (src/oracle/canaries.ts withExistingSample).
import { describe, expect, it } from 'vitest';
import { EXISTING_CANARY_SAMPLE, withExistingSample } from '../../src/oracle/canaries.js';

const list = (...ids: string[]) => Buffer.from(ids.map((id) => `${id}\n`).join(''));
const ids = (bytes: Buffer) => bytes.toString('utf8').split('\n').filter(Boolean);
/** The step's list for the hidden list's bytes and the existing tests' ids. */
const sampled = (hidden: Buffer, existing: string[]) =>
  withExistingSample(hidden, ids(hidden), existing);

describe('withExistingSample', () => {
  it('keeps the hidden list as it is and adds a few existing tests, never a hidden one twice', () => {
    const hidden = list('t::h1', 't::h2');
    const existing = ['t::e1', 't::h1', 't::e2', 't::e3', 't::e4', 't::e5'];
    const out = sampled(hidden, existing);
    expect(out.subarray(0, hidden.length)).toEqual(hidden);
    const added = ids(out).slice(2);
    expect(added).toHaveLength(EXISTING_CANARY_SAMPLE);
    expect(new Set(added).size).toBe(added.length);
    for (const id of added) expect(['t::e1', 't::e2', 't::e3', 't::e4', 't::e5']).toContain(id);
  });

  it('samples at random: over many grades every existing test is chosen', () => {
    const existing = Array.from({ length: 10 }, (_, i) => `t::e${i}`);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) {
      for (const id of ids(sampled(list('t::h'), existing)).slice(1)) seen.add(id);
    }
    expect(seen.size).toBe(10);
  });

  it('takes every existing test when there are fewer than the sample, once each', () => {
    const out = sampled(list('t::h'), ['t::e1', 't::e1', 't::e2']);
    expect(ids(out).sort()).toEqual(['t::e1', 't::e2', 't::h']);
  });

  it('ends the hidden list with a newline before the sample, and adds nothing to nothing', () => {
    expect(ids(sampled(Buffer.from('t::h'), ['t::e']))).toEqual(['t::h', 't::e']);
    const hidden = list('t::h');
    expect(sampled(hidden, [])).toBe(hidden);
    expect(sampled(hidden, ['t::h'])).toBe(hidden);
    expect(ids(sampled(Buffer.alloc(0), ['t::e']))).toEqual(['t::e']);
  });
});
