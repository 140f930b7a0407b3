// What the screen's code readers (screen-python.ts, screen-js.ts) take and give: the lines of a
// diff's hunks as the new file has them, and, for the added ones, the other spellings of what
// they do: names behind aliases resolved to what they were imported as, names built from
// string pieces folded into the name they build. The screen's rules read those spellings as
// they read the line itself, so a rule written for `sys.meta_path` also sees
// `from sys import meta_path as m` and `getattr(sys, "meta" + "_path")`.

/** One line of a hunk in the new file: a context line, or an added one. */
export interface CodeLine {
  /** 1-based line in the new file. */
  line: number;
  text: string;
  added: boolean;
}

export interface CodeReading {
  /** The other spellings of added lines, by line number. */
  spellings: Map<number, string[]>;
  /** Added lines that build a name from pieces, or reach a guarded object by a computed name. */
  computed: Set<number>;
}

/** Longest spelling kept for one line; a longer one is cut (the rules read bounded text). */
export const MAX_SPELLING_CHARS = 4096;

/**
 * Largest hunk the readers parse, in characters (the default `patch_bytes` limit): a longer
 * hunk is screened by its raw lines alone, so that a huge patch cannot make the screen slow.
 */
export const MAX_READ_CHARS = 1024 * 1024;

/** The hunks small enough to read. */
export function readable(hunks: readonly CodeLine[][]): CodeLine[][] {
  return hunks.filter((h) => h.reduce((n, l) => n + l.text.length + 1, 0) <= MAX_READ_CHARS);
}

export function newReading(): CodeReading {
  return { spellings: new Map(), computed: new Set() };
}

export function addSpelling(reading: CodeReading, line: number, spelling: string): void {
  const text =
    spelling.length > MAX_SPELLING_CHARS ? spelling.slice(0, MAX_SPELLING_CHARS) : spelling;
  const list = reading.spellings.get(line);
  if (list === undefined) reading.spellings.set(line, [text]);
  else if (!list.includes(text)) list.push(text);
}

/** The first part of a dotted name. */
export function rootOf(dotted: string): string {
  const dot = dotted.indexOf('.');
  return dot < 0 ? dotted : dotted.slice(0, dot);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]{0,200}$/;

/** Whether a folded string is usable as one attribute name. */
export function isIdentifier(text: string): boolean {
  return IDENTIFIER.test(text);
}

/** A folded string as a quoted literal on one line. */
export function quoted(text: string): string {
  return JSON.stringify(text);
}
