// What the built-in runners read of the hidden test patch: the files it touches, from its
// `diff --git`, `---`/`+++`, mode, rename and copy lines (each runner chooses the test targets
// or files it runs by them). The evaluator hands a runner these headers alone, never a hunk:
// the hidden tests' lines stay out of every file the task uid can read.
import { parseDiff } from './diff-parse.js';

const KEPT = [
  'diff --git ',
  'old mode ',
  'new mode ',
  'deleted file mode ',
  'new file mode ',
  'copy from ',
  'copy to ',
  'rename from ',
  'rename to ',
  'rename old ',
  'rename new ',
  '--- ',
  '+++ ',
];

/**
 * Each file section's header lines (up to its first hunk or binary patch), in order. A patch
 * the parser refuses gives its `diff --git` lines alone.
 */
export function patchHeaders(patch: Buffer): Buffer {
  const text = patch.toString('latin1');
  let sections: Array<{ start: number; end: number }>;
  try {
    sections = parseDiff(patch);
  } catch {
    const lines = text.split('\n').filter((line) => line.startsWith('diff --git '));
    return Buffer.from(lines.map((line) => `${line}\n`).join(''), 'latin1');
  }
  const out: string[] = [];
  for (const { start, end } of sections) {
    for (const line of text.slice(start, end).split('\n')) {
      if (
        line.startsWith('@@') ||
        line.startsWith('GIT binary patch') ||
        line.startsWith('Binary files ')
      )
        break;
      if (KEPT.some((prefix) => line.startsWith(prefix))) out.push(`${line}\n`);
    }
  }
  return Buffer.from(out.join(''), 'latin1');
}
