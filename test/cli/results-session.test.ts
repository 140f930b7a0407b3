// The documented results session (docs/results.md, "A session on the example suite"), run as
// written: each `proctor …` line of that block, in order, in the repository root with
// PROCTOR_HOME set to a fresh home, batch ids standing in for the page's $A and $B. Real grades
// of the examples/ bundles in Docker; the figures the page shows are checked here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

/** The `proctor` lines of docs/results.md's session block (comments and output dropped). */
function sessionCommands(): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'results.md'), 'utf8');
  const start = page.indexOf('<!-- results-session -->');
  expect(start).toBeGreaterThan(0);
  const block = page.slice(start).split('```')[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('$ proctor '))
    .map((line) =>
      line
        .slice(2)
        .replace(/\s+#.*$/, '')
        .trim(),
    );
}

describe('the results session of docs/results.md', () => {
  it('runs every command as written and shows the figures the page shows', async () => {
    const home = tempDir();
    const out = tempDir();
    const commands = sessionCommands();
    expect(commands).toHaveLength(7);
    const batches: Record<string, string> = {};
    const outputs: string[] = [];
    for (const command of commands) {
      const args = command
        .split(/\s+/)
        .slice(1)
        .map((word) => word.replace(/^\$([AB])$/, (_, name: string) => batches[name] ?? word))
        // The archive goes to a temporary folder, not into the checkout.
        .map((word) => (word === 'draft.tar.gz' ? join(out, word) : word));
      const result = await proctor(args, { PROCTOR_HOME: home }, ROOT);
      expect({
        command,
        code: result.code,
        stderr: result.code === 0 ? '' : result.stderr,
      }).toEqual({ command, code: 0, stderr: '' });
      const batch = /\(batch (b_[0-9a-z]+)\)/.exec(result.stdout)?.[1];
      if (batch !== undefined) batches[Object.keys(batches).length === 0 ? 'A' : 'B'] = batch;
      outputs.push(result.stdout);
    }
    const [gold, draft, report, compare, retry, jsonl, exported] = outputs as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    expect(gold).toContain('gold: 3 graded (3 resolved, 0 unresolved, 0 error, 0 invalid_task)');
    expect(gold).toContain(
      'not submitted: cpp-csv-split, go-text-ellipsis, java-roman-numerals, js-slug-accents, rust-ini-values\n',
    );
    expect(draft).toContain(
      'not submitted: cpp-csv-split, go-text-ellipsis, java-roman-numerals, js-slug-accents, rust-ini-values, sh-country-codes',
    );
    expect(report).toMatch(/INCOMPLETE\n\s+incomplete\s+6 tasks not submitted/);
    expect(report).toMatch(/resolved rate \(scored\)\s+50\.0% \[9\.5%, 90\.5%\] \(1\/2\)/);
    expect(report).toMatch(/resolved rate \(all\)\s+12\.5% \[2\.2%, 47\.1%\] \(1\/8\)/);
    expect(compare).toContain('both pass 1, both fail 0, pass→fail 1, fail→pass 0');
    expect(compare).toContain('exact McNemar p = 1.000');
    expect(compare).toContain('difference -50.0 points [-90.5, +27.3]');
    expect(compare).toMatch(/pass→fail {2}node-version-compare/);
    expect(retry).toMatch(/nothing to retry/);
    expect(
      jsonl
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { class: string }).class),
    ).toEqual(['unresolved', 'resolved']);
    expect(exported).toMatch(/draft\.tar\.gz: 2 jobs, 15 files/);
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);
});
