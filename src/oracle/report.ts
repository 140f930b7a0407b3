// Reads the report a task's runner wrote (runner contract: JUnit XML or Proctor's JSON report)
// into one status per test ID. The report is written by code the candidate controls, so it is
// hostile input: its size is checked before any decoding, XML may carry no DTD at all (no
// entities, hence no billion laughs and no XXE), nesting and test counts are bounded, and IDs
// live in a Map so that `__proto__` is just another test. Anything unusable is a
// REPORT_INVALID ProctorError with a short, single-line reason that never quotes more than
// 200 characters of the report.
//
// Decisions where the runner contract is silent:
// - A test ID reported more than once keeps its worst status (error > failed > skipped >
//   passed), and each repetition is noted in `problems`.
// - In JUnit attribute values the five predefined entities (`&amp;` `&lt;` `&gt;` `&quot;`
//   `&apos;`) and numeric character references of legal XML characters are decoded; any other
//   `&…;` stays as literal text. Decoding never lengthens a value.
// - A testcase's children decide its status: `<error>` > `<failure>` > `<skipped>` > none
//   (passed). Surefire's `<flakyFailure>`/`<rerunFailure>` are ignored: the test passed on rerun.
// - Test IDs are compared exactly, without trimming or whitespace normalisation.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { zodProblem } from '../problems.js';

export const TEST_STATUSES = ['passed', 'failed', 'error', 'skipped'] as const;
export type TestStatus = (typeof TEST_STATUSES)[number];

/**
 * What SWE-bench's log parser for the task's repository would have recorded for a test from
 * the same run (swebench/harness/log_parsers): its TestStatus values, or ABSENT when that
 * parser would not have recorded the ID at all (a sympy skip, a pytest XPASS under -rA). A
 * dialect runner knows its framework's raw outcome, so it says this beside Proctor's own
 * status; tasks graded with SWE-bench's rules (`[grading] statuses = "swebench"`) read it.
 */
export const SWEBENCH_STATUSES = [
  'PASSED',
  'FAILED',
  'ERROR',
  'SKIPPED',
  'XFAIL',
  'ABSENT',
] as const;
export type SwebenchStatus = (typeof SWEBENCH_STATUSES)[number];

export type ReportFormat = 'json' | 'junit';

export interface ParsedReport {
  format: ReportFormat;
  /** One status per test ID, in first-seen order. */
  tests: Map<string, TestStatus>;
  /** Non-fatal findings for the oracle log (repeated IDs and how they merged); bounded. */
  problems: string[];
  /**
   * A JSON report's `integrity` object, unchecked: what a protocol-2 runner's collector says
   * of the run (see integrity.ts, which validates it). Other runners' is never read.
   */
  integrity?: unknown;
  /**
   * A JSON report's `swebench` statuses, for the IDs whose entry has one (a repeated ID keeps
   * the worst, by SWE-bench's order: ABSENT and ERROR and FAILED over SKIPPED over XFAIL and
   * PASSED). Empty for JUnit XML.
   */
  swebench: Map<string, SwebenchStatus>;
  /**
   * A JSON report's `cause`: the runner's own account of why tests could not run (the first
   * lines of an import error in a conftest, a build that failed), when its tests are `error`
   * for it. Written by code the candidate may control: quoted, never trusted for a verdict.
   */
  cause?: string;
}

export interface ReportLimits {
  /** Largest report accepted, in bytes, checked before decoding or parsing. Default 16 MiB. */
  maxBytes?: number;
  /** Deepest element nesting accepted in JUnit XML. Default 64 (real reports need about 5). */
  maxDepth?: number;
  /** Most tests (JSON entries or JUnit testcases, repetitions included). Default 100,000. */
  maxTests?: number;
}

export const DEFAULT_REPORT_LIMITS: Readonly<Required<ReportLimits>> = {
  maxBytes: 16 * 1024 * 1024,
  maxDepth: 64,
  maxTests: 100_000,
};

/** Longest `cause` a JSON report may give, in UTF-16 code units. */
export const MAX_CAUSE_CHARS = 4000;
/** Longest test ID accepted, in UTF-16 code units. */
export const MAX_TEST_ID_LENGTH = 1000;
/** Longest excerpt of the report (or of a parser message) quoted in an error or problem. */
export const MAX_EXCERPT_CHARS = 200;
const MAX_PROBLEMS = 50;

const STATUS_RANK: Record<TestStatus, number> = { passed: 0, skipped: 1, failed: 2, error: 3 };

/** The worse of two statuses: error > failed > skipped > passed. */
export function worseStatus(a: TestStatus, b: TestStatus): TestStatus {
  return STATUS_RANK[b] > STATUS_RANK[a] ? b : a;
}

/** `text` on one line, cut to MAX_EXCERPT_CHARS with an ellipsis. */
// A colour or cursor sequence of a terminal (CSI), and any other control character but a tab
// and a newline.
// eslint-disable-next-line no-control-regex
const TERMINAL_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text a test process wrote, made safe to show: terminal colour sequences dropped, every other
 * control character but a tab and a newline written as `\xNN` (a test that prints gzip bytes,
 * a carriage return that would overwrite a line).
 */
export function printable(text: string): string {
  return text
    .replace(TERMINAL_SEQUENCE, '')
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function excerpt(text: string): string {
  const line = printable(text.replace(/[\r\n\t]+/g, ' '));
  return line.length > MAX_EXCERPT_CHARS ? `${line.slice(0, MAX_EXCERPT_CHARS)}…` : line;
}

function invalid(reason: string, data?: Record<string, unknown>): ProctorError {
  return new ProctorError('REPORT_INVALID', `invalid test report: ${reason}`, { data });
}

/**
 * Parses a runner's report, already read by the caller with a size bound. The format comes
 * from the content: `{` first (after whitespace and a UTF-8 BOM) is JSON, `<` is JUnit XML.
 * Throws ProctorError REPORT_INVALID for anything else, for reports over `maxBytes`, and for
 * malformed, hostile or contract-breaking content.
 */
export function parseReport(bytes: Uint8Array, limits: ReportLimits = {}): ParsedReport {
  const max = resolveLimits(limits);
  if (bytes.byteLength > max.maxBytes) {
    throw invalid(`report is ${bytes.byteLength} bytes, over the limit of ${max.maxBytes}`, {
      bytes: bytes.byteLength,
      maxBytes: max.maxBytes,
    });
  }
  const format = detectFormat(bytes);
  let text: string;
  try {
    // fatal: a report with invalid UTF-8 is refused rather than silently repaired into IDs
    // that can never match. The decoder drops a leading BOM.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid('report is not valid UTF-8');
  }
  const collector = new Collector(max.maxTests);
  const integrity =
    format === 'json' ? parseJson(text, collector) : parseJunit(text, max, collector);
  return {
    format,
    tests: collector.tests,
    swebench: collector.swebench,
    ...(collector.cause === undefined ? {} : { cause: collector.cause }),
    problems: collector.problems(),
    ...(integrity === undefined ? {} : { integrity }),
  };
}

function resolveLimits(limits: ReportLimits): Required<ReportLimits> {
  // `??`, not a spread: an option passed as undefined means its default.
  const resolved = {
    maxBytes: limits.maxBytes ?? DEFAULT_REPORT_LIMITS.maxBytes,
    maxDepth: limits.maxDepth ?? DEFAULT_REPORT_LIMITS.maxDepth,
    maxTests: limits.maxTests ?? DEFAULT_REPORT_LIMITS.maxTests,
  };
  for (const key of ['maxBytes', 'maxDepth', 'maxTests'] as const) {
    const value = resolved[key];
    if (!Number.isSafeInteger(value) || value < 1) {
      // A bad limit is a harness bug, not the candidate's fault: never REPORT_INVALID.
      throw new ProctorError(
        'INTERNAL',
        `Expected \`${key}\` to be an integer >= 1, got \`${String(value)}\``,
      );
    }
  }
  return resolved;
}

function detectFormat(bytes: Uint8Array): ReportFormat {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) {
      i += 1;
      continue;
    }
    if (b === 0x7b) return 'json';
    if (b === 0x3c) return 'junit';
    throw invalid(
      `expected JSON ('{') or JUnit XML ('<'), found byte 0x${(b ?? 0).toString(16).padStart(2, '0')}`,
    );
  }
  throw invalid('report is empty');
}

/** How bad each SWE-bench status is for a repeated ID: a fail of any kind beats a skip. */
const SWEBENCH_RANK: Record<SwebenchStatus, number> = {
  PASSED: 0,
  XFAIL: 0,
  SKIPPED: 1,
  FAILED: 2,
  ERROR: 3,
  ABSENT: 4,
};

/** Accumulates statuses, merging repetitions of an ID, and counts entries against the limit. */
class Collector {
  readonly tests = new Map<string, TestStatus>();
  readonly swebench = new Map<string, SwebenchStatus>();
  cause: string | undefined;
  private readonly repeats = new Map<string, number>();
  private count = 0;

  constructor(readonly maxTests: number) {}

  /** Counts one more test entry; call before the entry is validated or recorded. */
  countOne(): void {
    this.count += 1;
    if (this.count > this.maxTests) throw tooManyTests(this.maxTests);
  }

  record(id: string, status: TestStatus): void {
    checkTestId(id);
    const seen = this.tests.get(id);
    if (seen === undefined) {
      this.tests.set(id, status);
      return;
    }
    this.tests.set(id, worseStatus(seen, status));
    this.repeats.set(id, (this.repeats.get(id) ?? 1) + 1);
  }

  recordSwebench(id: string, status: SwebenchStatus): void {
    const seen = this.swebench.get(id);
    const rank = (s: SwebenchStatus) => SWEBENCH_RANK[s];
    this.swebench.set(id, seen === undefined || rank(status) > rank(seen) ? status : seen);
  }

  problems(): string[] {
    const out: string[] = [];
    for (const [id, times] of this.repeats) {
      if (out.length === MAX_PROBLEMS) {
        out.push(`… and ${this.repeats.size - MAX_PROBLEMS} more repeated test IDs`);
        break;
      }
      out.push(`test ID "${excerpt(id)}" reported ${times} times; kept ${this.tests.get(id)}`);
    }
    return out;
  }
}

function tooManyTests(maxTests: number): ProctorError {
  return invalid(`more than ${maxTests} tests`, { maxTests });
}

function checkTestId(id: string): void {
  if (id.length === 0) throw invalid('a test ID is empty');
  if (id.length > MAX_TEST_ID_LENGTH) {
    throw invalid(`test ID "${excerpt(id)}" is longer than ${MAX_TEST_ID_LENGTH} characters`);
  }
  if (id.includes('\0')) throw invalid(`test ID "${excerpt(id)}" contains NUL`);
}

// ---------------------------------------------------------------------------------------------
// Proctor's JSON report

const jsonReportSchema = z
  .object({
    schema: z.literal(1),
    tests: z.array(
      z
        .object({
          id: z
            .string()
            .min(1)
            .max(MAX_TEST_ID_LENGTH)
            .refine((id) => !id.includes('\0'), 'must not contain NUL'),
          status: z.enum(TEST_STATUSES),
          swebench: z.enum(SWEBENCH_STATUSES).optional(),
        })
        .strict(),
    ),
    integrity: z.unknown().optional(),
    cause: z.string().max(MAX_CAUSE_CHARS).optional(),
  })
  .strict();

/** Records the tests and the cause; returns the report's `integrity` object, if any. */
function parseJson(text: string, collector: Collector): unknown {
  let raw: unknown;
  try {
    // JSON.parse makes `__proto__` an own key, never a prototype; the strict schema then
    // refuses it like any other unknown key.
    raw = JSON.parse(text);
  } catch (error) {
    throw invalid(`malformed JSON: ${excerpt(error instanceof Error ? error.message : '')}`);
  }
  // Refuse a huge list before zod walks every entry of it.
  if (isRecord(raw) && Array.isArray(raw.tests) && raw.tests.length > collector.maxTests) {
    throw tooManyTests(collector.maxTests);
  }
  const result = jsonReportSchema.safeParse(raw);
  if (!result.success) {
    const { path: where, detail } = zodProblem(result.error, 'report');
    throw invalid(excerpt(`${where}: ${detail}`), { path: excerpt(where) });
  }
  for (const test of result.data.tests) {
    collector.countOne();
    collector.record(test.id, test.status);
    if (test.swebench !== undefined) collector.recordSwebench(test.id, test.swebench);
  }
  if (result.data.cause !== undefined) collector.cause = result.data.cause;
  return result.data.integrity;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// JUnit XML

interface XmlElement {
  name: string;
  attrs: Record<string, unknown>;
  children: XmlElement[];
}

const STOP_NODES = ['system-out', 'system-err', 'failure', 'error', 'skipped', 'properties'].map(
  (name) => `..${name}`,
);

/**
 * Parses JUnit XML in three passes over at most `maxBytes`: a structural scan that refuses
 * declarations and over-deep or over-long documents before any tree is built, fast-xml-parser's
 * validator for well-formedness, then its parser (entities off) for the tree.
 */
function parseJunit(text: string, max: Required<ReportLimits>, collector: Collector): void {
  prescanXml(text, max);
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    throw invalid(
      `malformed XML at line ${valid.err.line}, column ${valid.err.col}: ${excerpt(valid.err.msg)}`,
    );
  }
  let nodes: unknown;
  try {
    nodes = new XMLParser({
      preserveOrder: true, // a plain array tree: no merging of same-named siblings
      ignoreAttributes: false,
      attributeNamePrefix: '@_',
      parseAttributeValue: false,
      parseTagValue: false,
      trimValues: false, // IDs are compared exactly
      processEntities: false, // no entity expansion at all; see decodeReferences
      htmlEntities: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      maxNestedTags: max.maxDepth,
      // Kept as raw text, never parsed: only these elements' names matter, and the parser
      // builds ordinary text one character at a time (seconds for megabytes of test output).
      stopNodes: STOP_NODES,
    }).parse(text);
  } catch (error) {
    throw invalid(`malformed XML: ${excerpt(error instanceof Error ? error.message : '')}`);
  }
  const roots = toElements(nodes);
  const root = roots[0];
  if (root === undefined) throw invalid('XML report has no root element');
  if (roots.length > 1) throw invalid('malformed XML: more than one root element');
  if (root.name !== 'testsuites' && root.name !== 'testsuite') {
    throw invalid(`root element must be <testsuites> or <testsuite>, got <${excerpt(root.name)}>`);
  }
  // Depth-first in document order without recursion, so first-seen order is the report's.
  const stack: Array<{ elements: XmlElement[]; next: number }> = [
    { elements: root.children, next: 0 },
  ];
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const element = top.elements[top.next];
    top.next += 1;
    if (element === undefined) {
      stack.pop();
    } else if (element.name === 'testsuite' || element.name === 'testsuites') {
      stack.push({ elements: element.children, next: 0 });
    } else if (element.name === 'testcase') {
      collector.countOne();
      collector.record(testcaseId(element), testcaseStatus(element));
    }
    // Anything else (<properties>, <system-out>, …) says nothing about a test's status.
  }
}

/** The elements of a preserveOrder node list, skipping text; attributes kept raw. */
function toElements(nodes: unknown): XmlElement[] {
  const out: XmlElement[] = [];
  if (!Array.isArray(nodes)) return out;
  for (const node of nodes as unknown[]) {
    if (!isRecord(node)) continue;
    const name = Object.keys(node).find((key) => key !== ':@' && key !== '#text');
    if (name === undefined) continue;
    const attrs = node[':@'];
    out.push({
      name,
      attrs: isRecord(attrs) ? attrs : {},
      children: toElements(node[name]),
    });
  }
  return out;
}

function attribute(element: XmlElement, name: string): string | undefined {
  const key = `@_${name}`;
  if (!Object.hasOwn(element.attrs, key)) return undefined;
  const value = element.attrs[key];
  return typeof value === 'string' ? decodeReferences(value) : undefined;
}

/** `classname::name`, or `name` alone when classname is missing or empty. */
function testcaseId(testcase: XmlElement): string {
  const name = attribute(testcase, 'name');
  if (name === undefined) throw invalid('a <testcase> has no name attribute');
  const classname = attribute(testcase, 'classname');
  return classname === undefined || classname === '' ? name : `${classname}::${name}`;
}

const CHILD_STATUS = new Map<string, TestStatus>([
  ['failure', 'failed'],
  ['error', 'error'],
  ['skipped', 'skipped'],
]);

function testcaseStatus(testcase: XmlElement): TestStatus {
  let status: TestStatus = 'passed';
  for (const child of testcase.children) {
    const childStatus = CHILD_STATUS.get(child.name);
    if (childStatus !== undefined) status = worseStatus(status, childStatus);
  }
  return status;
}

const REFERENCE = /&(?:#([0-9]{1,7})|#x([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g;
const PREDEFINED = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
]);

/** Decodes the five predefined entities and character references to legal XML characters. */
function decodeReferences(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(
    REFERENCE,
    (
      whole: string,
      dec: string | undefined,
      hex: string | undefined,
      named: string | undefined,
    ) => {
      if (named !== undefined) return PREDEFINED.get(named) ?? whole;
      const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
      return isXmlChar(code) ? String.fromCodePoint(code) : whole;
    },
  );
}

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * A linear scan of the markup (comments, CDATA and quoted attribute values skipped, as the
 * parser does) that refuses any `<!DOCTYPE`, `<!ENTITY` or other declaration, nesting deeper
 * than `maxDepth` and more than `maxTests` testcases, before a tree is built. Text inside CDATA
 * (captured test output, say an HTML page) is not markup and may contain `<!DOCTYPE`.
 */
function prescanXml(text: string, max: Required<ReportLimits>): void {
  let depth = 0;
  let testcases = 0;
  let rootSeen = false;
  let i = 0;
  for (;;) {
    const lt = text.indexOf('<', i);
    // The validator lets text after a self-closing root through; refuse it here.
    if (depth === 0 && !isBlank(text, i, lt === -1 ? text.length : lt)) {
      throw invalid('malformed XML: text outside the root element');
    }
    if (lt === -1) return;
    if (text.startsWith('<!--', lt)) {
      i = endOf(text, '-->', lt + 4, 'comment');
    } else if (text.startsWith('<![CDATA[', lt)) {
      i = endOf(text, ']]>', lt + 9, 'CDATA section');
    } else if (text.startsWith('<?', lt)) {
      i = endOf(text, '?>', lt + 2, 'processing instruction');
    } else if (text.startsWith('<!', lt)) {
      const declaration = /<![A-Za-z]*/y;
      declaration.lastIndex = lt;
      const name = declaration.exec(text)?.[0] ?? '<!';
      throw invalid(`${excerpt(name)} is not allowed: reports may not carry a DTD or entities`);
    } else if (text.startsWith('</', lt)) {
      i = endOf(text, '>', lt + 2, 'end tag');
      depth = Math.max(0, depth - 1);
    } else {
      const tag = readStartTag(text, lt);
      if (tag === undefined) {
        i = lt + 1; // not a tag ("a < b"); the validator reports it
        continue;
      }
      i = tag.end;
      if (depth === 0) {
        if (rootSeen) throw invalid('malformed XML: more than one root element');
        rootSeen = true;
      }
      if (tag.isTestcase) {
        testcases += 1;
        if (testcases > max.maxTests) throw tooManyTests(max.maxTests);
      }
      if (!tag.selfClosing) {
        depth += 1;
        if (depth > max.maxDepth) throw invalid(`XML nesting deeper than ${max.maxDepth}`);
      }
    }
  }
}

function endOf(text: string, terminator: string, from: number, what: string): number {
  const at = text.indexOf(terminator, from);
  if (at === -1) throw invalid(`malformed XML: unterminated ${what}`);
  return at + terminator.length;
}

function isBlank(text: string, from: number, to: number): boolean {
  for (let j = from; j < to; j += 1) if (!isSpace(text.charCodeAt(j))) return false;
  return true;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function readStartTag(
  text: string,
  lt: number,
): { end: number; selfClosing: boolean; isTestcase: boolean } | undefined {
  const nameStart = lt + 1;
  if (nameStart >= text.length || isSpace(text.charCodeAt(nameStart))) return undefined;
  let j = nameStart;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (isSpace(c) || c === 0x2f || c === 0x3e) break;
    j += 1;
  }
  const isTestcase = j - nameStart === 8 && text.startsWith('testcase', nameStart);
  let quote = 0;
  for (; j < text.length; j += 1) {
    const c = text.charCodeAt(j);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) {
      quote = c;
    } else if (c === 0x3e) {
      return { end: j + 1, selfClosing: text.charCodeAt(j - 1) === 0x2f, isTestcase };
    }
  }
  throw invalid('malformed XML: unterminated start tag');
}
