// The documentation holds together: every relative link of README.md, docs/*.md and
// examples/README.md resolves (the file exists; a #anchor names a heading of it, by GitHub's
// slug rules), and every command line of the shell blocks of the README and docs/ names a real
// command, real options and real npm scripts. The checker itself is tested on temporary
// folders, so a broken link must fail.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import {
  brokenLinks,
  documentedCommandProblem,
  headingAnchors,
  markdownLinks,
  shellCommands,
  slugify,
} from '../helpers/docs.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const program = () =>
  buildProgram({ out: () => undefined, err: () => undefined }, async () => undefined, {});
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;
const docs = () =>
  readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

function folder(files: Record<string, string>): string {
  const root = tempDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the documentation', () => {
  it('has a page per subject, each linked from the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(markdownLinks(readme).map((link) => link.target.split('#')[0]));
    expect(docs().length).toBeGreaterThanOrEqual(13);
    for (const page of docs())
      expect({ page, linked: linked.has(page) }).toEqual({ page, linked: true });
  });

  it('has no broken relative link in README.md, docs/*.md or examples/README.md', () => {
    const files = ['README.md', 'examples/README.md', ...docs()];
    const links = files.flatMap((file) => markdownLinks(readFileSync(join(ROOT, file), 'utf8')));
    expect(links.length).toBeGreaterThan(30);
    expect(brokenLinks(ROOT, files)).toEqual([]);
  });

  it('keeps the README to what a first hour needs', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
    expect(readme).toContain(
      'npm ci && npm run setup && node bin/proctor.js baseline examples --gold --wait',
    );
    expect(shellCommands(readme)).toContain('npm test');
  });

  it("names only real commands, options and scripts in the README's code blocks", () => {
    const commands = shellCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const proctorLines = commands.filter((line) => /^(proctor|node bin\/proctor\.js) /.test(line));
    expect(proctorLines.length).toBeGreaterThanOrEqual(8);
    const problems = commands
      .map((line) => ({ line, problem: documentedCommandProblem(program(), scripts, line) }))
      .filter((result) => result.problem !== null);
    expect(problems).toEqual([]);
  });
  it('names only real commands, options and scripts in the shell blocks of docs/', () => {
    const problems = docs().flatMap((page) =>
      shellCommands(readFileSync(join(ROOT, page), 'utf8'))
        .map((line) => ({
          page,
          line,
          problem: documentedCommandProblem(program(), scripts, line),
        }))
        .filter((result) => result.problem !== null),
    );
    expect(problems).toEqual([]);
  });
});

describe('the link checker', () => {
  it('finds a link to a missing file, and one to a missing heading', () => {
    const root = folder({
      'README.md': '# Title\n\nSee [a](docs/a.md), [b](docs/b.md) and [c](docs/a.md#gone).\n',
      'docs/a.md': '# A\n\n## Here\n',
    });
    expect(brokenLinks(root, ['README.md'])).toEqual([
      { file: 'README.md', line: 3, target: 'docs/b.md', problem: 'docs/b.md does not exist' },
      {
        file: 'README.md',
        line: 3,
        target: 'docs/a.md#gone',
        problem: '#gone: no heading of docs/a.md has this anchor',
      },
    ]);
  });

  it('finds an anchor into a README section that moved to another page', () => {
    const root = folder({
      'README.md': '# Proctor\n\n## Quick start\n',
      'docs/commands.md': '# Commands\n\nSee [The database](../README.md#the-database).\n',
      'docs/configuration.md': '# Configuration\n\n## The database\n',
    });
    expect(brokenLinks(root, ['docs/commands.md'])).toEqual([
      expect.objectContaining({ target: '../README.md#the-database', line: 3 }),
    ]);
  });

  it('resolves links relative to the page, same-page anchors and duplicate headings', () => {
    const root = folder({
      'docs/a.md':
        '# A\n\n## Setup\n\n## Setup\n\n## `--wait` and workers\n\n' +
        'Go [up](#setup-1), [there](b.md#the-evaluators-workspace-in-memory), ' +
        '[home](../README.md), [out](https://example.com/x#y) and [mail](mailto:a@b.c).\n',
      'docs/b.md': "# B\n\n### The evaluator's workspace in memory\n",
      'README.md': '# R\n',
    });
    expect(brokenLinks(root, ['docs/a.md'])).toEqual([]);
    const broken = folder({ 'docs/a.md': '# A\n\n## Setup\n\n[twice](#setup-1)\n' });
    expect(brokenLinks(broken, ['docs/a.md'])).toEqual([
      expect.objectContaining({ target: '#setup-1' }),
    ]);
  });

  it('reads links whose text runs over a line break, and reference definitions', () => {
    const root = folder({
      'a.md': '# A\n\nthe debug export (see [`proctor\nexport`](b.md#nope)).\n\n[ref]: c.md\n',
      'b.md': '# B\n',
    });
    expect(brokenLinks(root, ['a.md']).map((p) => [p.line, p.target])).toEqual([
      [4, 'b.md#nope'],
      [6, 'c.md'],
    ]);
  });

  it('ignores links and headings inside code', () => {
    const root = folder({
      'a.md':
        '# A\n\n```md\n[x](missing.md)\n## Fenced\n```\n\nInline `[y](missing.md)` too; ' +
        '[z](#fenced) is broken.\n',
    });
    expect(brokenLinks(root, ['a.md'])).toEqual([
      expect.objectContaining({ target: '#fenced', line: 8 }),
    ]);
  });

  it('refuses a link that leaves the repository, and an anchor into a file that is not Markdown', () => {
    const root = folder({ 'a.md': '[x](../../etc/passwd) [y](b.txt#top)\n', 'b.txt': 'top\n' });
    expect(brokenLinks(root, ['a.md']).map((p) => p.problem)).toEqual([
      '../../etc/passwd is outside the repository',
      '#top: b.txt is not a Markdown file',
    ]);
  });

  it.each([
    ['Task bundles and runners', 'task-bundles-and-runners'],
    ['`--wait` and workers', '--wait-and-workers'],
    ['Debug exports: `proctor export`', 'debug-exports-proctor-export'],
    ["The evaluator's workspace in memory", 'the-evaluators-workspace-in-memory'],
    ['pass@k and pass^k', 'passk-and-passk'],
    ['Tasks and "not submitted"', 'tasks-and-not-submitted'],
    ['The `[source]` table', 'the-source-table'],
    ['snake_case  and  spaces', 'snake_case--and--spaces'],
    ['[A link](x.md) in a heading', 'a-link-in-a-heading'],
    ['Ünïcode — dash', 'ünïcode--dash'],
  ])('slugs %j as GitHub does: %j', (heading, slug) => {
    expect(slugify(heading)).toBe(slug);
  });

  it('numbers repeated headings -1, -2 after the first', () => {
    expect([...headingAnchors('# A\n## A\n### A\n#### B #\n')]).toEqual(['a', 'a-1', 'a-2', 'b']);
  });
});

describe('the command checker', () => {
  it.each([
    ['node bin/proctor.js baseline examples --gold --wait', null],
    ['proctor --home /tmp/h report b_1 --compare b_2 --format json', null],
    [
      'PROCTOR_HOME=/tmp/h proctor import swebench rows.jsonl --repos r --environment e --out s',
      null,
    ],
    ['proctor derive --help', null],
    ['npm run setup', null],
    ['npm test', null],
    ['npm ci', null],
    ['proctor frobnicate', 'proctor: unknown command frobnicate'],
    ['node bin/proctor.js baseline examples --golden', 'baseline: unknown option --golden'],
    ['proctor solve examples --wait', 'solve: missing --solver'],
    ['proctor solve examples --solver', 'solve: --solver needs a value'],
    ['proctor baseline --gold', 'baseline: missing an argument'],
    ['proctor import rows.jsonl', 'import: unknown command rows.jsonl'],
    ['proctor db', 'db: no sub-command'],
    ['npm run bench:nothing', 'npm run bench:nothing: package.json has no such script'],
  ])('%j: %j', (line, problem) => {
    expect(documentedCommandProblem(program(), scripts, line)).toBe(problem);
  });

  it('splits code blocks into command lines: continuations, comments, && and pipes', () => {
    const markdown =
      'text\n\n```sh\nnpm ci && npm run setup   # set up\nproctor derive --repo r \\\n' +
      '  --base a --fix b\ncat x | proctor grade t --patch -\n```\n\n```toml\nx = 1\n```\n';
    expect(shellCommands(markdown)).toEqual([
      'npm ci',
      'npm run setup',
      'proctor derive --repo r    --base a --fix b',
      'cat x',
      'proctor grade t --patch -',
    ]);
  });
});
