// The report's statistics against values worked out by hand (z = 1.959964, the 95 % normal
// quantile; z² = 3.841459). Each comment shows the computation the expected figure comes from.
import { describe, expect, it } from 'vitest';
import {
  mcnemarExact,
  pairedDifference,
  passAtK,
  passAtKTable,
  passHatK,
  percentile,
  wilson,
} from '../../src/results/stats.js';

describe('wilson', () => {
  it('bounds 7 of 10 by the score interval', () => {
    // p = 0.7, n = 10, z²/n = 0.3841459, denominator 1.3841459
    // centre = (0.7 + 0.19207) / 1.3841459 = 0.644493
    // half = 1.959964 · sqrt(0.021 + 0.0096036) / 1.3841459 = 1.959964 · 0.174939 / 1.384146
    //      = 0.247715
    // interval 0.644493 ± 0.247715 = [0.396778, 0.892209]
    const r = wilson(7, 10);
    expect(r?.rate).toBe(0.7);
    expect(r?.low).toBeCloseTo(0.396778, 5);
    expect(r?.high).toBeCloseTo(0.892209, 5);
  });

  it('keeps 0 of 10 and 10 of 10 inside [0, 1] with a real width', () => {
    // 0/10: centre = 0.19207 / 1.3841459 = 0.138766, half = 1.959964 · sqrt(0.0096036) /
    // 1.3841459 = 0.138766: [0, 0.277533]; 10/10 mirrors it: [0.722467, 1]
    expect(wilson(0, 10)).toMatchObject({ low: 0, rate: 0 });
    expect(wilson(0, 10)?.high).toBeCloseTo(0.277533, 5);
    expect(wilson(10, 10)).toMatchObject({ high: 1, rate: 1 });
    expect(wilson(10, 10)?.low).toBeCloseTo(0.722467, 5);
  });

  it('has no rate for no tasks, and refuses impossible counts', () => {
    expect(wilson(0, 0)).toBeNull();
    expect(() => wilson(3, 2)).toThrow(/count from 0 to 2, got `3`/);
    expect(() => wilson(1, 2.5)).toThrow(/`n` to be an integer >= 0, got `2.5`/);
  });
});

describe('mcnemarExact', () => {
  it('is twice the binomial tail of the smaller discordant count', () => {
    // b = 1, c = 8, n = 9: 2 · (C(9,0) + C(9,1)) / 2^9 = 2 · 10 / 512 = 0.0390625
    expect(mcnemarExact(1, 8)).toBeCloseTo(0.0390625, 12);
    expect(mcnemarExact(8, 1)).toBeCloseTo(0.0390625, 12);
    // b = 0, c = 6: 2 · 1 / 64 = 0.03125
    expect(mcnemarExact(0, 6)).toBeCloseTo(0.03125, 12);
    // b = 2, c = 5, n = 7: 2 · (1 + 7 + 21) / 128 = 58 / 128 = 0.453125
    expect(mcnemarExact(2, 5)).toBeCloseTo(0.453125, 12);
  });

  it('is 1 for a tie and for no discordant pairs', () => {
    // b = c = 5: 2 · P(X ≤ 5) for Bin(10, ½) = 2 · 638 / 1024 > 1, capped at 1
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
  });

  it('stays finite for thousands of pairs', () => {
    // Symmetric halves: P(X ≤ 2000) for Bin(4000, ½) is just over ½, so p caps at 1; and a
    // lopsided 0 vs 3000 is 2 · 2^-3000, which underflows to 0 rather than NaN.
    expect(mcnemarExact(2000, 2000)).toBe(1);
    expect(mcnemarExact(0, 3000)).toBe(0);
    expect(Number.isFinite(mcnemarExact(1400, 1600))).toBe(true);
  });
});

describe('pairedDifference', () => {
  it("is rate(B) − rate(A) with Newcombe's paired score interval", () => {
    // Fagerland, Lydersen & Laake (2014)'s airway example: both 1, A only 1, B only 7,
    // neither 12; n = 21.
    // rate A = 2/21 = 0.095238, Wilson [0.026519, 0.289141]
    // rate B = 8/21 = 0.380952, Wilson [0.207510, 0.591213]
    // θ = 6/21 = 0.285714
    // φ = (1·12 − 1·7) / sqrt(2 · 19 · 8 · 13) = 5 / sqrt(3952) = 0.079536
    // δ = sqrt((0.380952 − 0.207510)² − 2φ(0.173442)(0.289141 − 0.095238) + 0.193903²)
    //   = sqrt(0.030082 − 0.005350 + 0.037598) = sqrt(0.062331) = 0.249662
    // ε = sqrt((0.591213 − 0.380952)² − 2φ(0.210261)(0.068719) + 0.068719²)
    //   = sqrt(0.044210 − 0.002299 + 0.004722) = sqrt(0.046634) = 0.215948
    // interval [0.285714 − 0.249662, 0.285714 + 0.215948] = [0.036053, 0.501663]
    const d = pairedDifference({ bothPass: 1, passToFail: 1, failToPass: 7, bothFail: 12 });
    expect(d?.difference).toBeCloseTo(0.285714, 5);
    expect(d?.low).toBeCloseTo(0.036053, 4);
    expect(d?.high).toBeCloseTo(0.501663, 4);
    expect(d?.method).toBe('newcombe-paired-score');
  });

  it('is 0 within a symmetric interval when nothing flips', () => {
    // No discordant pair: θ = 0, and both margins are the same Wilson interval of 3/6
    // ([0.187620, 0.812380]); φ = (3·3 − 0)/sqrt(3·3·3·3) = 1, so δ = ε = |0.31238 − 0.31238| = 0.
    const d = pairedDifference({ bothPass: 3, passToFail: 0, failToPass: 0, bothFail: 3 });
    expect(d?.difference).toBe(0);
    expect(d?.low).toBeCloseTo(0, 9);
    expect(d?.high).toBeCloseTo(0, 9);
  });

  it('has no difference for no tasks', () => {
    expect(pairedDifference({ bothPass: 0, passToFail: 0, failToPass: 0, bothFail: 0 })).toBeNull();
  });
});

describe('pass@k and pass^k', () => {
  it('are the unbiased estimators over n scored attempts with c resolved', () => {
    // n = 5, c = 3:
    // pass@1 = 1 − C(2,1)/C(5,1) = 1 − 2/5 = 0.6
    // pass@2 = 1 − C(2,2)/C(5,2) = 1 − 1/10 = 0.9
    // pass@3 = 1 − C(2,3)/C(5,3) = 1 − 0 = 1
    // pass^1 = 3/5 = 0.6; pass^2 = C(3,2)/C(5,2) = 3/10; pass^3 = 1/10; pass^4 = 0
    expect(passAtK(5, 3, 1)).toBeCloseTo(0.6, 12);
    expect(passAtK(5, 3, 2)).toBeCloseTo(0.9, 12);
    expect(passAtK(5, 3, 3)).toBe(1);
    expect(passHatK(5, 3, 1)).toBeCloseTo(0.6, 12);
    expect(passHatK(5, 3, 2)).toBeCloseTo(0.3, 12);
    expect(passHatK(5, 3, 3)).toBeCloseTo(0.1, 12);
    expect(passHatK(5, 3, 4)).toBe(0);
  });

  it('are null, not guessed, when a task has fewer scored attempts than k', () => {
    expect(passAtK(2, 1, 3)).toBeNull();
    expect(passHatK(2, 2, 3)).toBeNull();
  });

  it('stay exact where the binomial coefficients overflow a double', () => {
    // n = 2000, c = 1, k = 1000: 1 − C(1999,1000)/C(2000,1000) = 1 − 1000/2000 = 0.5
    expect(passAtK(2000, 1, 1000)).toBeCloseTo(0.5, 12);
    // pass^2 of n = 2000, c = 1000: (1000 · 999) / (2000 · 1999) = 0.249875
    expect(passHatK(2000, 1000, 2)).toBeCloseTo(0.24987494, 8);
  });

  it('averages over the tasks with k attempts and counts the short ones', () => {
    // task A n=3 c=1, task B n=3 c=3, task C n=1 c=0 (two of its attempts were errors)
    // k=1: A 1/3, B 1, C 0 -> pass@1 = 4/9 = 0.444444; pass^1 the same
    // k=2: A 1 − C(2,2)/C(3,2) = 2/3, B 1 -> 5/6 = 0.833333; pass^2: A 0, B 1 -> 0.5; C short
    // k=3: A 1, B 1 -> 1; pass^3: A 0, B 1 -> 0.5; C short
    const table = passAtKTable([
      { n: 3, c: 1 },
      { n: 3, c: 3 },
      { n: 1, c: 0 },
    ]);
    expect(table.map((f) => f.k)).toEqual([1, 2, 3]);
    expect(table[0]?.passAtK).toBeCloseTo(4 / 9, 12);
    expect(table[0]).toMatchObject({ tasks: 3, short: 0 });
    expect(table[1]?.passAtK).toBeCloseTo(5 / 6, 12);
    expect(table[1]?.passHatK).toBeCloseTo(0.5, 12);
    expect(table[1]).toMatchObject({ tasks: 2, short: 1 });
    expect(table[2]).toMatchObject({ k: 3, passAtK: 1, passHatK: 0.5, tasks: 2, short: 1 });
  });

  it('refuses k below 1', () => {
    expect(() => passAtK(3, 1, 0)).toThrow(/`k` to be an integer >= 1, got `0`/);
  });
});

describe('percentile', () => {
  it('is the nearest rank', () => {
    // 10 values: p50 rank ceil(5) = 5th = 50; p95 rank ceil(9.5) = 10th = 100
    const values = [100, 10, 90, 20, 80, 30, 70, 40, 60, 50];
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(100);
    expect(percentile([], 50)).toBeNull();
  });
});
