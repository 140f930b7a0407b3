// npm run bench:screen — the screen's hits and speed on real patches: the examples' and
// fixtures' gold patches, SWE-bench's gold patches (datasets/swebench) and three real Lite
// submissions' predictions (datasets/predictions). Prints, per corpus, the patches screened,
// those with a hit, the hits per rule and the time per patch; with --hits, every hit (the
// corpus, the instance, the rule, the file and line, the excerpt), for reading by hand.
// Usage: npm run bench:screen [-- --hits] [-- --repeat 5]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { screenDiff } from '../src/oracle/screen.js';
import { screenCorpora } from '../test/helpers/screen-corpora.js';

const { values } = parseArgs({
  options: {
    hits: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '3' },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPEAT = Math.max(1, Number(values.repeat));

for (const corpus of screenCorpora(ROOT)) {
  let withHit = 0;
  const perRule = new Map<string, number>();
  const times: number[] = [];
  const shown: string[] = [];
  for (const sample of corpus.samples) {
    let best = Infinity;
    let result = screenDiff(sample.patch);
    for (let i = 0; i < REPEAT; i += 1) {
      const started = process.hrtime.bigint();
      result = screenDiff(sample.patch);
      best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
    }
    times.push(best);
    if (result.count > 0) withHit += 1;
    for (const hit of result.hits) {
      perRule.set(hit.rule, (perRule.get(hit.rule) ?? 0) + 1);
      shown.push(`  ${sample.name}  ${hit.rule}  ${hit.file}:${hit.line ?? '-'}  ${hit.excerpt}`);
    }
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / Math.max(1, times.length);
  const max = times.at(-1) ?? 0;
  const rules = [...perRule].map(([rule, n]) => `${rule} ${n}`).join(', ') || 'none';
  console.log(
    `${corpus.name} (${corpus.kind}): ${corpus.samples.length} screened, ${withHit} with a hit; ` +
      `hits by rule: ${rules}; ${mean.toFixed(2)} ms a patch (max ${max.toFixed(2)} ms)`,
  );
  if (values.hits) for (const line of shown) console.log(line);
}
