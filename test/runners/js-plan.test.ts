// Which test files the jest and vitest runners run for a list of ids (src/runners/core/js.py,
// plan_files and find_files, with each runner's own_title): the files that define a listed
// title, and every file (None) only when a title is found nowhere. A title may hold " > "
// itself, which is also what joins an id's describe blocks and title (jest's ids in SWE-bench's
// parse_log_jest_json form, vitest's own): the runner tries every ending of the id. The
// runners' own Python, on the host's python3, over files in a temporary folder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inRunner } from '../helpers/js-runner-python.js';
import { tempDir } from '../helpers/temp.js';

function checkout(): string {
  const dir = tempDir();
  mkdirSync(join(dir, '__tests__'));
  writeFileSync(
    join(dir, '__tests__/map.test.js'),
    `describe('Map', () => {\n  test('maps a > b', () => {});\n  test('keeps keys', () => {});\n});\n`,
  );
  writeFileSync(
    join(dir, '__tests__/other.test.js'),
    `describe('Other', () => {\n  test('is unrelated', () => {});\n});\n`,
  );
  return dir;
}

const plan = (ids: string[]) =>
  `print(json.dumps(runner.plan_files(${JSON.stringify(ids)}, False)))`;

describe("the JavaScript runners' test files", () => {
  it('jest (ids joined by " > "): runs the one file that defines a title holding " > ", not every file', async () => {
    const cwd = checkout();
    const env = { RUNNER_JEST_IDS: 'json' };
    expect(await inRunner('jest', plan(['Map > maps a > b']), '', { cwd, env })).toBe(
      '["__tests__/map.test.js"]',
    );
    expect(
      await inRunner('jest', plan(['Map > keeps keys', 'Other > is unrelated']), '', { cwd, env }),
    ).toBe('["__tests__/map.test.js", "__tests__/other.test.js"]');
    // A title no file defines: every file runs, filtered by name.
    expect(await inRunner('jest', plan(['Map > maps a > c']), '', { cwd, env })).toBe('null');
  });

  it('jest (verbose titles): a title is one title, " > " and all', async () => {
    const cwd = checkout();
    const env = { RUNNER_JEST_IDS: 'verbose' };
    expect(await inRunner('jest', plan(['maps a > b']), '', { cwd, env })).toBe(
      '["__tests__/map.test.js"]',
    );
    expect(await inRunner('jest', plan(['b']), '', { cwd, env })).toBe('null');
  });

  it('vitest (file > describe > name): runs the one file that defines a name holding " > "', async () => {
    const cwd = checkout();
    expect(
      await inRunner('vitest', plan(['__tests__/map.test.js > Map > maps a > b']), '', { cwd }),
    ).toBe('["__tests__/map.test.js"]');
    expect(
      await inRunner('vitest', plan(['__tests__/map.test.js > Map > maps a > c']), '', { cwd }),
    ).toBe('null');
  });
});
