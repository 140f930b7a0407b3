// Which of the integrity layers (docs/threat-model.md) a task has, and the warnings `proctor validate` gives
// about the ones it could have. A candidate's own code runs in the test process, so the
// verdict rests on layers around it: the screen of the diff (screen.ts, every task), a deny
// glob that drops every conftest.py (pytest loads one as a plugin before any test), and the
// layers of a runner that speaks protocol 2 (protocol.ts): sentinels, the collector, its
// tripwires and the base commit's test configuration.
import { open } from 'node:fs/promises';
import type { Bundle } from './bundle.js';
import { runnerPlacesCanaries } from './canaries.js';
import { JEST_ID_FORMS, JEST_IDS_ENV, jsCanaryDialect } from './js-canary-step.js';
import { deniedBy } from './diff-filter.js';
import { PROTOCOL_PREFIX_BYTES, runnerProtocol } from './protocol.js';

/** Paths a conftest.py deny glob must drop: at the root and deep in a package. */
const CONFTEST_PROBES = ['conftest.py', 'a/b/conftest.py'] as const;

/** How much of tests/run is read to tell whether it runs pytest. */
const RUNNER_PROBE_BYTES = 1024 * 1024;

/** Whether the task's deny globs drop a conftest.py wherever a candidate puts it. */
export function deniesConftest(bundle: Pick<Bundle, 'grading'>): boolean {
  return CONFTEST_PROBES.every((path) => deniedBy(bundle.grading.deny, path) !== null);
}

/** The layers a runner that speaks protocol 2 brings (see docs/threat-model.md). */
export const PROTOCOL_LAYERS = ['sentinels', 'collector', 'tripwires', 'base-config'] as const;

/**
 * The integrity layers of a task, by name: `screen` (always: every candidate diff is
 * screened), `conftest-denied` when its deny globs drop every conftest.py, PROTOCOL_LAYERS
 * when its tests/run speaks protocol 2, and `canaries` when it also places canaries.
 */
export async function integrityLayers(bundle: {
  grading: Bundle['grading'];
  paths: Pick<Bundle['paths'], 'runner'>;
}): Promise<string[]> {
  const layers = ['screen'];
  if (deniesConftest(bundle)) layers.push('conftest-denied');
  const head = await readHead(bundle.paths.runner, PROTOCOL_PREFIX_BYTES);
  if (runnerProtocol(head) === 2) {
    layers.push(...PROTOCOL_LAYERS);
    // Mutants of the hidden tests (canaries.ts): only with the protocol's request to carry them.
    if (runnerPlacesCanaries(head) || jsCanaryDialect(head) !== null) layers.push('canaries');
  }
  return layers;
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await file.read({ buffer, position: 0 });
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * Whether the task runs pytest: its tests/run names it (the built-in pytest runner does, as
 * does any runner that calls it). Only the first MiB is read.
 */
export async function runsPytest(bundle: Pick<Bundle, 'paths'>): Promise<boolean> {
  return runnerRunsPytest(bundle.paths.runner);
}

/**
 * Whether the runner file at `path` names pytest (its first MiB is read), outside the canaries'
 * shared part (src/runners/core/canary.py), which names it in any runner that includes it (the
 * go runner runs no pytest).
 */
export async function runnerRunsPytest(path: string): Promise<boolean> {
  const text = (await readHead(path, RUNNER_PROBE_BYTES)).toString('latin1');
  return /\bpytest\b/.test(text.replace(CANARY_CORE, ''));
}

/** The canaries' shared part as a runner includes it, from its first line to its last. */
const CANARY_CORE =
  /^# ---- canaries: mutants of the task's own tests [^\n]*\n[\s\S]*?^# ---- end of canaries -+$/m;

/**
 * Warnings for a valid bundle: layers it should have and does not, and a jest runner's ids'
 * form it will not read. Never errors.
 */
export async function integrityWarnings(
  bundle: Pick<Bundle, 'grading' | 'paths'> & Partial<Pick<Bundle, 'testsEnv'>>,
): Promise<string[]> {
  const warnings: string[] = [];
  if (!deniesConftest(bundle) && (await runsPytest(bundle))) {
    warnings.push(
      "task.toml: grading.deny: a pytest task should deny **/conftest.py (a candidate's conftest.py is a pytest plugin that can rewrite any outcome)",
    );
  }
  const form = bundle.testsEnv?.[JEST_IDS_ENV];
  if (form !== undefined && !JEST_ID_FORMS.includes(form)) {
    const head = await readHead(bundle.paths.runner, PROTOCOL_PREFIX_BYTES);
    if (jsCanaryDialect(head) === 'jest') {
      warnings.push(
        `task.toml: tests.env: ${JEST_IDS_ENV}: must be ${JEST_ID_FORMS.map((f) => `"${f}"`).join(' or ')}, not ${JSON.stringify(form)}; the jest runner makes every listed test an error`,
      );
    }
  }
  return warnings;
}
