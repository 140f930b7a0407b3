// [source] in task.toml: optional, informational, strictly checked; every bad value is named
// by its key with a message that says what is wanted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { loadBundle, parseTask } from '../../src/oracle/bundle.js';
import { tempDir } from '../helpers/temp.js';

const COMMIT = 'a'.repeat(40);
const UPSTREAM = 'c'.repeat(40);

const TOML = `schema = 1
id = "astropy__astropy-12907"

[environment]
dockerfile = "environment/Dockerfile"
workdir = "/testbed"
base_commit = "${COMMIT}"
`;

const FULL_SOURCE = `
[source]
dataset = "princeton-nlp/SWE-bench_Verified"
instance_id = "astropy__astropy-12907"
repo = "astropy/astropy"
base_commit = "${UPSTREAM}"
fix_commit = "${'d'.repeat(40)}"
version = "4.3"
environment_setup_commit = "${'e'.repeat(40)}"
hints_text = """
Line one.
Line two, with "quotes"."""
created_at = "2022-03-03T15:14:54Z"
`;

/** The problems parseTask finds in TOML with `source` appended. */
function problems(source: string) {
  return parseTask(parseToml(TOML.replace('astropy__', 'astropy--') + source)).problems;
}

function only(source: string, key: string, message: RegExp) {
  expect(problems(source)).toEqual([{ key, message: expect.stringMatching(message) }]);
}

describe('[source]', () => {
  it('is optional: a bundle without it has no source', () => {
    const parsed = parseTask(parseToml(TOML.replace('astropy__', 'astropy--')));
    expect(parsed.problems).toEqual([]);
    expect(parsed.task?.source).toBeUndefined();
  });

  it('loads every key onto the bundle, spelled as in task.toml', async () => {
    const dir = join(tempDir(), 'bundle');
    const files: Record<string, string> = {
      'task.toml': TOML.replace('astropy__', 'astropy--') + FULL_SOURCE,
      'description.md': 'Fix it.\n',
      'environment/Dockerfile': 'FROM debian:bookworm-slim\n',
      'tests/run': '#!/bin/sh\n',
      'tests/existing.txt': 'a\n',
      'tests/hidden.txt': 'b\n',
      'tests/hidden.patch': '--- a/x\n+++ b/x\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text, { mode: 0o755 });
    }
    const bundle = await loadBundle(dir);
    expect(bundle.source).toEqual({
      dataset: 'princeton-nlp/SWE-bench_Verified',
      instance_id: 'astropy__astropy-12907',
      repo: 'astropy/astropy',
      base_commit: UPSTREAM,
      fix_commit: 'd'.repeat(40),
      version: '4.3',
      environment_setup_commit: 'e'.repeat(40),
      hints_text: 'Line one.\nLine two, with "quotes".',
      created_at: '2022-03-03T15:14:54Z',
    });
    // The image's commit is [environment].base_commit, never the upstream one.
    expect(bundle.baseCommit).toBe(COMMIT);

    writeFileSync(join(dir, 'task.toml'), files['task.toml'] + 'stars = 5\n');
    const error = await loadBundle(dir).catch((e: unknown) => e);
    expect(isProctorError(error, 'BUNDLE_INVALID')).toBe(true);
    expect((error as Error).message).toContain('task.toml: source.stars: unknown key');
  });

  it('accepts a repository URL, a plain date, and an empty table', () => {
    expect(problems('[source]\nrepo = "https://gitlab.example/group/sub/name"\n')).toEqual([]);
    expect(problems('[source]\ncreated_at = "2024-01-31"\n')).toEqual([]);
    expect(problems('[source]\ncreated_at = "2024-01-31 12:00:00+01:00"\n')).toEqual([]);
    expect(problems('[source]\n')).toEqual([]);
  });

  it('names an unknown key', () => {
    only('[source]\ninstance = "x"\n', 'source.instance', /^unknown key$/);
  });

  it('refuses commits that are not full lowercase ids', () => {
    only('[source]\nbase_commit = "abc123"\n', 'source.base_commit', /full commit id/);
    only(
      `[source]\nfix_commit = "${'A'.repeat(40)}"\n`,
      'source.fix_commit',
      /40 \(or 64\) lowercase hex/,
    );
    only(
      '[source]\nenvironment_setup_commit = 7\n',
      'source.environment_setup_commit',
      /expected a string, got 7/,
    );
  });

  it('refuses a repo that is neither owner/name nor an https URL', () => {
    only('[source]\nrepo = "astropy"\n', 'source.repo', /must be owner\/name/);
    only('[source]\nrepo = "git@github.com:a/b.git"\n', 'source.repo', /https:\/\/ URL/);
    only('[source]\nrepo = "/home/me/src/astropy"\n', 'source.repo', /must be owner\/name/);
  });

  it('says to quote a version or a date that TOML read as a number or a date', () => {
    only('[source]\nversion = 4.3\n', 'source.version', /must be a string; quote it: version = /);
    only(
      '[source]\ncreated_at = 2022-03-03T15:14:54Z\n',
      'source.created_at',
      /must be a string; quote it: created_at = "2024/,
    );
    only('[source]\ncreated_at = "March 3rd"\n', 'source.created_at', /date or date-time/);
  });

  it('keeps one-line values on one line, and text bounded', () => {
    only('[source]\ninstance_id = "a\\nb"\n', 'source.instance_id', /must be one line/);
    only('[source]\ndataset = ""\n', 'source.dataset', /must not be empty/);
    only(`[source]\ndataset = "${'x'.repeat(201)}"\n`, 'source.dataset', /at most 200 characters/);
    only('[source]\nversion = "1\\t2"\n', 'source.version', /must be one line/);
    only('[source]\nhints_text = "a\\u0000b"\n', 'source.hints_text', /must not contain NUL/);
    only(
      `[source]\nhints_text = "${'x'.repeat(65_537)}"\n`,
      'source.hints_text',
      /at most 65536 characters/,
    );
  });

  it('must be a table', () => {
    const toml = TOML.replace('astropy__', 'astropy--').replace(
      '[environment]',
      'source = "SWE-bench"\n[environment]',
    );
    expect(parseTask(parseToml(toml)).problems).toEqual([
      { key: 'source', message: 'expected a table, got "SWE-bench"' },
    ]);
  });
});
