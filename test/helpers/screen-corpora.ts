// The corpora the screen's false alarms are measured on (test/oracle/screen-corpora.test.ts,
// bench/screen.ts): gold patches, honest by construction, and real solvers' predictions.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface ScreenSample {
  /** Where the patch is from: a bundle path, or an instance id. */
  name: string;
  patch: Buffer;
}

export interface ScreenCorpus {
  name: string;
  /** Gold patches are honest by construction; predictions are what a solver wrote. */
  kind: 'gold' | 'predictions';
  samples: ScreenSample[];
}

/** The gold patches of the examples and of the test fixtures' bundles. */
export function bundleGolds(root: string): ScreenSample[] {
  const samples: ScreenSample[] = [];
  for (const folder of ['examples', 'test/fixtures/bundles']) {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(folder, entry.name, 'solution/gold.patch');
      try {
        samples.push({ name: path, patch: readFileSync(join(root, path)) });
      } catch {
        // a bundle without a gold patch
      }
    }
  }
  return samples;
}

/** Each row's `field` of a JSON-lines file, skipping empty patches. */
function jsonl(root: string, path: string, field: string): ScreenSample[] {
  return readFileSync(join(root, path), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .flatMap((row) => {
      const patch = row[field];
      if (typeof patch !== 'string' || patch.trim() === '') return [];
      return [{ name: String(row.instance_id), patch: Buffer.from(patch) }];
    });
}

export const SWEBENCH_GOLDS = ['lite', 'verified-django', 'multilingual'] as const;
export const PREDICTIONS = [
  '20240604_CodeR',
  '20240609_moatless_gpt4o',
  '20240530_autocoderover-v20240408',
] as const;

/** Every corpus: the bundles' golds, SWE-bench's golds, then the three Lite submissions. */
export function screenCorpora(root: string): ScreenCorpus[] {
  return [
    { name: 'bundle gold patches', kind: 'gold', samples: bundleGolds(root) },
    ...SWEBENCH_GOLDS.map((name) => ({
      name: `swebench ${name} gold`,
      kind: 'gold' as const,
      samples: jsonl(root, `datasets/swebench/${name}.jsonl`, 'patch'),
    })),
    ...PREDICTIONS.map((name) => ({
      name: `${name} predictions`,
      kind: 'predictions' as const,
      samples: jsonl(root, `datasets/predictions/${name}.jsonl`, 'model_patch'),
    })),
  ];
}
