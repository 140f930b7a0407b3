// No false alarm: the gold patch of every shipped example whose runner places canaries (the
// built-in pytest, go, cargo, ctest and junit runners; the node and mocha runners, whose canaries Proctor places) passes
// with them, each mutant failing and each sentinel in the hidden test files holding, through
// the real oracle.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTrust } from '../../src/config.js';
import { canaryLines, runnerPlacesCanaries } from '../../src/oracle/canaries.js';
import { jsCanaryDialect } from '../../src/oracle/js-canary-step.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import { requireDocker, resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { gradeIn } from '../helpers/grade.js';
import { ROOT } from '../helpers/processes.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'examples-canaries');

/** The examples whose tests/run places canaries. */
const EXAMPLES = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .filter((name) => {
    const runner = readFileSync(join(ROOT, 'examples', name, 'tests/run'));
    return runnerPlacesCanaries(runner) || jsCanaryDialect(runner) !== null;
  });

describe('the examples with canaries', { timeout: 600_000 }, () => {
  beforeAll(() => requireDocker(docker));

  it('include the Python one, the JavaScript ones, the Go one, the Rust, C++ and Java ones', () => {
    expect(EXAMPLES).toEqual(
      expect.arrayContaining([
        'py-duration-parse',
        'node-version-compare',
        'js-slug-accents',
        'go-text-ellipsis',
        'rust-ini-values',
        'cpp-csv-split',
        'java-roman-numerals',
      ]),
    );
  });

  it.each(EXAMPLES)('%s: the gold patch passes, every canary failing', async (name) => {
    const bundle = await loadBundle(join(ROOT, 'examples', name));
    // Built as Proctor builds it, offered the host's CA bundle and proxy settings: the
    // JavaScript example's npm ci must also work behind a TLS-inspecting proxy.
    const trust = buildTrust({ home: ROOT, build: {} });
    const image = (await resolveImage(docker, bundle.environment, { trust })).localId;
    const gold = readFileSync(bundle.paths.goldPatch ?? '');
    const evaluation = await gradeIn(docker, SCOPE, image, bundle, gold);
    expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
    const canaries = evaluation.phaseRecords.find((p) => p.name === 'hidden')?.canaries;
    expect(canaries?.error).toBeNull();
    expect(canaries?.mutants.length).toBeGreaterThan(0);
    for (const m of canaries?.mutants ?? []) expect(m.status, m.mutation).toMatch(/failed|error/);
    // Every runner here writes the sentinels into the hidden test files: each held, and the
    // hidden phase asked for no file of their own.
    expect(canaries?.sentinels.length, canaries?.sentinelsWhy ?? '').toBeGreaterThan(0);
    for (const s of canaries?.sentinels ?? []) {
      expect(s.status, `${s.id} (calls ${s.calls || 'nothing'})`).toBe(s.expect);
    }
    const hidden = evaluation.phaseRecords.find((p) => p.name === 'hidden');
    expect(hidden?.integrity?.sentinels).toEqual([]);
    // The oracle log names each mutant and what it reported.
    const lines = canaryLines(canaries!);
    for (const m of canaries?.mutants ?? []) {
      expect(lines).toContain(`  canary ${m.id} of ${m.test}: ${m.mutation}: ${m.status}`);
    }
  });
});
