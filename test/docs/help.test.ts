// `proctor COMMAND --help` ends with the page of the documentation to read on, and that page
// (and its #anchor) exists: the help is run for real, through the bin, for every command.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { HELP_DOCS, buildProgram } from '../../src/cli/main.js';
import { proctor } from '../helpers/cli.js';
import { linkProblem } from '../helpers/docs.js';
import { ROOT } from '../helpers/processes.js';

function commandPaths(command: Command, path = ''): string[] {
  return [
    path,
    ...command.commands.flatMap((sub) =>
      commandPaths(sub, path === '' ? sub.name() : `${path} ${sub.name()}`),
    ),
  ];
}

const paths = commandPaths(
  buildProgram({ out: () => undefined, err: () => undefined }, async () => undefined, {}),
);

describe('proctor COMMAND --help', () => {
  it('names a page for every command', () => {
    expect(paths.length).toBeGreaterThan(15);
    expect(paths.filter((path) => HELP_DOCS[path] === undefined)).toEqual([]);
  });

  it('names only pages and anchors that exist', () => {
    const problems = Object.entries(HELP_DOCS).flatMap(([path, doc]) => {
      const targets = doc.match(/(README\.md|docs\/[\w.-]+\.md)(#[\w-]+)?/g) ?? [];
      expect({ path, targets: targets.length > 0 }).toEqual({ path, targets: true });
      return targets
        .map((target) => ({ path, target, problem: linkProblem(ROOT, 'README.md', target) }))
        .filter((result) => result.problem !== null);
    });
    expect(problems).toEqual([]);
  });

  it('ends with that page, for every command', async () => {
    const results = await Promise.all(
      paths.map(async (path) => {
        const result = await proctor([...(path === '' ? [] : path.split(' ')), '--help']);
        const last = result.stdout.trimEnd().split('\n').at(-1);
        return { path, code: result.code, last };
      }),
    );
    expect(results).toEqual(
      paths.map((path) => ({ path, code: 0, last: `See ${HELP_DOCS[path] ?? ''}` })),
    );
  });

  it('ends the help printed for a bare `proctor` (on stderr, exit 2) the same way', async () => {
    const result = await proctor([]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(`See ${HELP_DOCS[''] ?? ''}`);
  });
});
