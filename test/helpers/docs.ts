// Checks on the documentation (README.md and docs/*.md): that every relative link resolves
// to a file and, with a `#anchor`, to a heading of it by GitHub's slug rules; and that the
// command lines of the README's code blocks name real commands, options and npm scripts.
// Used by test/docs/*.test.ts, on the repository and on temporary folders.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command, Option } from 'commander';

export interface LinkProblem {
  /** The Markdown file, relative to the root. */
  file: string;
  line: number;
  target: string;
  problem: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/**
 * The text with fenced code blocks and inline code spans blanked (newlines kept, so offsets
 * keep their line numbers): links and headings inside code are not links or headings.
 */
function proseOf(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  const kept = lines.map((line) => {
    const open = FENCE.exec(line)?.[1];
    if (fence === null) {
      if (open !== undefined) {
        fence = open;
        return '';
      }
      return line;
    }
    if (open !== undefined && open[0] === fence[0] && open.length >= fence.length) fence = null;
    return '';
  });
  // A code span may run over a line break ("[`proctor\nexport`](…)"), never a blank line.
  return kept
    .join('\n')
    .replace(/(`+)((?:[^\n]|\n(?!\s*\n))*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, ' '));
}

/**
 * GitHub's anchor for a heading: the heading's text (inline code and link text kept, link
 * targets, HTML tags and emphasis marks dropped) lower-cased, every character that is not a
 * letter, mark, number, connector (`_`), hyphen or space removed, and each space made `-`.
 */
export function slugify(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated slug gets -1, -2, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of headingLines(markdown)) {
    const slug = slugify(line);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function headingLines(markdown: string): string[] {
  // Headings are found in the text with fences blanked, but read from the original line, so
  // a heading's inline code keeps its text.
  const original = markdown.split('\n');
  const prose = proseOf(markdown).split('\n');
  const headings: string[] = [];
  prose.forEach((line, index) => {
    if (/^\s{0,3}#{1,6}(\s|$)/.test(line)) {
      headings.push(
        (original[index] ?? '')
          .replace(/^\s{0,3}#{1,6}\s*/, '')
          .replace(/\s+#+\s*$/, '')
          .trim(),
      );
    }
  });
  return headings;
}

export interface MarkdownLink {
  target: string;
  line: number;
}

/** The link targets of a Markdown text outside code: `[text](target)`, `![alt](src)` and `[label]: target`. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const prose = proseOf(markdown);
  const lineAt = (offset: number) => prose.slice(0, offset).split('\n').length;
  const links: MarkdownLink[] = [];
  for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ target: match[1] ?? '', line: lineAt(match.index) });
  }
  for (const match of prose.matchAll(/^[ \t]{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) {
    links.push({ target: match[1] ?? '', line: lineAt(match.index) });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** Why a link from `file` does not resolve under `root`, or null when it does. */
export function linkProblem(root: string, file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: …: not ours to check
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const resolved = path === '' ? resolve(root, file) : resolve(dirname(resolve(root, file)), path);
  const inside = relative(resolve(root), resolved);
  if (inside.startsWith('..')) return `${path} is outside the repository`;
  if (!existsSync(resolved)) return `${path} does not exist`;
  if (anchor === null) return null;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
    return `#${anchor}: ${path} is not a Markdown file`;
  }
  if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
    return `#${anchor}: no heading of ${path === '' ? file : path} has this anchor`;
  }
  return null;
}

/** Every relative link of the given Markdown files (relative to root) that does not resolve. */
export function brokenLinks(root: string, files: readonly string[]): LinkProblem[] {
  const problems: LinkProblem[] = [];
  for (const file of files) {
    for (const link of markdownLinks(readFileSync(join(root, file), 'utf8'))) {
      const problem = linkProblem(root, file, link.target);
      if (problem !== null) problems.push({ file, line: link.line, target: link.target, problem });
    }
  }
  return problems;
}

/**
 * The command lines of a Markdown text's shell code blocks (```sh, ```bash, ```shell): a
 * trailing backslash joins lines, comments are dropped, and `&&`, `||`, `;` and `|` split.
 */
export function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    const joined = (block[1] ?? '').replace(/\\\n/g, ' ');
    for (const line of joined.split('\n')) {
      const code = line.replace(/(^|\s)#.*$/, '');
      for (const part of code.split(/&&|\|\||;|\|/)) {
        const command = part.trim();
        if (command !== '') commands.push(command);
      }
    }
  }
  return commands;
}

function findOption(command: Command, token: string): Option | undefined {
  for (let at: Command | null = command; at !== null; at = at.parent) {
    const option = at.options.find((o) => o.long === token || o.short === token);
    if (option !== undefined) return option;
  }
  return undefined;
}

/**
 * Why a `proctor …` command line does not fit the program, or null when it does: the command
 * (and sub-command) must exist, every option be one of its own or the program's, take its
 * value, and every required option and argument be given.
 */
export function proctorCommandProblem(program: Command, words: readonly string[]): string | null {
  let command = program;
  let index = 0;
  const positional: string[] = [];
  const given = new Set<Option>();
  while (index < words.length) {
    const word = words[index++] as string;
    if (word === '--help' || word === '-h') return null;
    if (word.startsWith('-') && word !== '-') {
      const name = word.split('=')[0] as string;
      const option = findOption(command, name);
      if (option === undefined) return `${command.name()}: unknown option ${name}`;
      given.add(option);
      if ((option.required || option.optional) && !word.includes('=')) {
        const next = words[index];
        if (option.required && (next === undefined || next.startsWith('--'))) {
          return `${command.name()}: ${name} needs a value`;
        }
        index += 1;
        while (option.variadic && words[index] !== undefined && !words[index]?.startsWith('-')) {
          index += 1;
        }
      }
      continue;
    }
    if (command.commands.length > 0 && positional.length === 0) {
      const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
      if (sub === undefined)
        return `${command === program ? 'proctor' : command.name()}: unknown command ${word}`;
      command = sub;
      continue;
    }
    positional.push(word);
  }
  if (command === program) return 'no command';
  if (command.commands.length > 0) return `${command.name()}: no sub-command`;
  for (const option of command.options) {
    if (option.mandatory && !given.has(option)) {
      return `${command.name()}: missing ${option.long ?? option.flags}`;
    }
  }
  const required = command.registeredArguments.filter((argument) => argument.required).length;
  if (positional.length < required) return `${command.name()}: missing an argument`;
  return null;
}

/**
 * Why a documented shell command does not exist, or null: `proctor …` and
 * `node bin/proctor.js …` against the program, `npm run X` and `npm test` against the
 * scripts of package.json. Other programs (git, docker, npm ci) are not checked.
 */
export function documentedCommandProblem(
  program: Command,
  scripts: Readonly<Record<string, string>>,
  line: string,
): string | null {
  // Environment assignments before the command (PROCTOR_HOME=… proctor …) are not the command.
  const words = line.split(/\s+/).filter((word) => word !== '');
  while (words[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
  if (words[0] === 'proctor') return proctorCommandProblem(program, words.slice(1));
  if (words[0] === 'node' && words[1] === 'bin/proctor.js') {
    return proctorCommandProblem(program, words.slice(2));
  }
  if (words[0] === 'npm' && (words[1] === 'run' || words[1] === 'run-script')) {
    const script = words[2];
    if (script === undefined) return 'npm run: no script named';
    return script in scripts ? null : `npm run ${script}: package.json has no such script`;
  }
  if (words[0] === 'npm' && (words[1] === 'test' || words[1] === 't')) {
    return 'test' in scripts ? null : 'npm test: package.json has no test script';
  }
  return null;
}
