// The screen of a candidate diff (layer 5 of docs/threat-model.md): the filtered diff's added
// lines and the names of the files it touches, read on the host before any candidate code
// runs, for references to test-framework internals, to Proctor's runner and report, and to
// process exits at import time. A candidate that fixes a bug has no business with any of
// these; one that forges a verdict nearly always needs one of them.
//
// It reads code, not only spellings: for Python and JavaScript/TypeScript files the code
// readers (screen-python.ts, screen-js.ts) give each added line its other spellings (aliases
// resolved, names built from literal pieces folded, `getattr(o, "n")` read as `o.n`), and
// every pattern rule reads those too, so `from sys import meta_path as m` and
// `getattr(sys, "meta" + "_path")` hit `module-table` as `sys.meta_path` does.
//
// It is still a tripwire, not a proof: a name computed at run time from data (a file, the
// network, arithmetic) folds to nothing. The verdict's real defences run in the evaluator
// (its runner, collector, tripwires and canaries); the screen makes forgeries visible in the
// log, the result and the reports, and with `[grading] tamper = "fail"` fails them before a
// container is spent on them. So each rule is chosen to be silent on honest patches: every
// committed gold patch gives no hit (test/oracle/screen-corpora.test.ts, which also holds
// the hits on three real submissions' predictions to those docs/threat-model.md judges).
//
// What is read:
// - added lines only (`+` lines of text hunks; a removed line cannot run), each with its line
//   number in the new file; the readers also read a hunk's context lines (an import the hunk
//   shows), and give spellings to added lines only;
// - content rules skip documentation (.md, .rst, .adoc, .txt), which never runs;
// - path rules read every path a file change names, old and new, whatever the change (a
//   deleted conftest.py changes the test configuration too);
// - binary files are not screened; they are counted in `unscreened`.
// Patterns use bounded repetition only, so a long line costs linear time; the readers skip a
// hunk longer than MAX_READ_CHARS (its raw lines are still screened).
import { parseDiff } from './diff-parse.js';
import { newReading, readable, type CodeLine, type CodeReading } from './screen-code.js';
import { readJavaScript } from './screen-js.js';
import { readPython } from './screen-python.js';

/** Most hits kept in a result; `count` has them all. */
export const MAX_SCREEN_HITS = 50;
/** Longest excerpt of a hit's line, in characters. */
export const MAX_EXCERPT_CHARS = 120;

export interface ScreenHit {
  /** The rule's id (SCREEN_RULES). */
  rule: string;
  /** The file's repository path (its new path; the old one for a deletion). */
  file: string;
  /** 1-based line in the new file; null for a rule about the file itself. */
  line: number | null;
  /** The line (or the path), trimmed to MAX_EXCERPT_CHARS around the match. */
  excerpt: string;
}

export interface ScreenResult {
  /** The first MAX_SCREEN_HITS hits, in diff order. */
  hits: ScreenHit[];
  /** Every hit, including those beyond `hits`. */
  count: number;
  /** Files that were not screened: binary patches. */
  unscreened: number;
}

type Scope = 'python' | 'javascript' | 'shell';

/** One added line and its number in the new file. */
interface AddedLine {
  line: number;
  text: string;
  /** Runs when the module is loaded (see moduleLevel). */
  moduleLevel: boolean;
  /** The `[section]` of an INI/TOML file the line is in, when the hunk shows it. */
  section: string | null;
}

interface ScreenedFile {
  path: string;
  paths: string[];
  added: AddedLine[];
  /** The other spellings of the added lines, and the lines that compute a name. */
  reading: CodeReading;
}

export interface ScreenRule {
  id: string;
  /** Why a hit is suspicious: one line, for the docs and for review. */
  why: string;
  /** Files whose added lines the rule reads; default every file but documentation. */
  scope?: Scope;
  /** Matched against each added line, and each other spelling of it (screen-code.ts). */
  pattern?: RegExp;
  /** Only lines that run when the module is loaded (module level, or a top-level block). */
  moduleLevel?: boolean;
  /** Matched against every path a change names: any change to such a file is a hit. */
  path?: RegExp;
  /** A rule that needs more than one line: the lines of `file` it hits. */
  scan?: (file: ScreenedFile) => AddedLine[];
}

const PY = /\.pyw?$/;
const JS = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const SH = /\.(?:sh|bash)$/;
const DOCS = /\.(?:md|markdown|rst|adoc|txt)$/i;

// pytest's keys in an ini-style section, for a hunk of tox.ini/setup.cfg/pyproject.toml that
// does not show which section it is in.
const PYTEST_KEY =
  /^\s{0,8}["']?(?:addopts|python_files|python_classes|python_functions|testpaths|norecursedirs|required_plugins|pythonpath|confcutdir|rootdir|usefixtures|filterwarnings|minversion|xfail_strict|junit_\w{1,40}|log_cli\w{0,20}|console_output_style|consider_namespace_packages|asyncio_mode)["']?\s{0,8}[=:]/;
const PYTEST_SECTION = /^(?:pytest|tool:pytest|tool\.pytest(?:\.[\w.-]{1,60})?)$/;
const PYTEST_CONFIG_FILE = /(?:^|\/)(?:tox\.ini|setup\.cfg|pyproject\.toml)$/;

/**
 * The rule table. Ids are stable (results and reports store them); add rules, do not rename.
 * Patterns are case-sensitive unless they say otherwise.
 */
export const SCREEN_RULES: readonly ScreenRule[] = [
  // --- pytest ------------------------------------------------------------------------------
  {
    id: 'pytest-internals',
    why: "pytest's private modules (`_pytest`), its report objects and plugin machinery",
    pattern:
      /\b_pytest\b|\bTestReport\b|\bfrom_item_and_call\b|\bCallInfo\b|\bpluggy\b|\bHookimplMarker\b/,
  },
  {
    id: 'pytest-hook',
    why: 'a pytest hook implementation or wrapper: it can rewrite any outcome',
    pattern:
      /\bpytest_(?:runtest|report|terminal|session|collect|collection|make_collect|pycollect|pyfunc|generate_tests|itemcollected|configure|unconfigure|cmdline|load_initial_conftests|addoption|addhooks|plugin_registered|fixture_setup|fixture_post_finalizer|exception_interact|internalerror|keyboard_interrupt|warning_recorded|assertrepr|deselected|ignore_collect|markeval)\w{0,40}|\bhookimpl\b|\bhookwrapper\b/,
  },
  {
    id: 'pytest-plugins',
    why: 'loads a pytest plugin: `pytest_plugins`, a `pytest11` entry point, `-p` options',
    pattern: /\bpytest_plugins\b|\bpytest11\b|\bPYTEST_PLUGINS\b/,
  },
  {
    id: 'pytest-options',
    why: "changes pytest's options or report from outside the runner",
    pattern:
      /\baddopts\b|\bPYTEST_ADDOPTS\b|\bPYTEST_DISABLE_PLUGIN_AUTOLOAD\b|\bjunit_?xml\b|--junit-?xml\b|\bjunit_family\b|\bxunit2\b/,
  },
  {
    id: 'pytest-config',
    why: "a line of a `[pytest]`/`[tool:pytest]`/`[tool.pytest…]` section: pytest's configuration",
    scan: (file) => {
      if (!file.paths.some((p) => PYTEST_CONFIG_FILE.test(p))) return [];
      return file.added.filter((a) => {
        if (a.text.trim() === '' || /^\s{0,8}[#;]/.test(a.text)) return false;
        const header = /^\s{0,8}\[+\s{0,8}([^\]\s]{1,100})\s{0,8}\]/.exec(a.text);
        if (header) return PYTEST_SECTION.test(header[1] ?? '');
        if (a.section !== null) return PYTEST_SECTION.test(a.section);
        return PYTEST_KEY.test(a.text);
      });
    },
  },
  // --- unittest and node:test -----------------------------------------------------------------
  {
    id: 'unittest-result',
    why: "unittest's result objects: they decide what passed",
    pattern:
      /\bunittest\.result\b|\b_?(?:Text)?TestResult\b|\bTextTestRunner\b|\.(?:addFailure|addError|addSuccess|addSkip|addExpectedFailure|addUnexpectedSuccess|addSubTest|wasSuccessful)\b/,
  },
  {
    id: 'node-test-internals',
    why: "node:test's runner, reporters and events: they decide what passed",
    pattern:
      /node:test\/reporters|--test-reporter|\bTestsStream\b|['"]test:(?:pass|fail|diagnostic|complete|plan|start|enqueue|dequeue|summary)['"]|require\(\s{0,4}['"](?:node:)?test['"]\s{0,4}\)\s{0,4}\.\s{0,4}run\b|import\s{0,4}\{[^}\n]{0,200}\brun\b[^}\n]{0,200}\}\s{0,4}from\s{0,4}['"](?:node:)?test['"]/,
  },
  {
    id: 'test-detection',
    why: 'behaves differently when a test framework is loaded or a test is running',
    pattern:
      /\bPYTEST_CURRENT_TEST\b|\bNODE_TEST_CONTEXT\b|['"](?:_?pytest|unittest)['"]\s{0,4}(?:not\s{1,4})?in\s{1,4}sys\.modules|sys\.modules\.get\(\s{0,4}['"]_?pytest['"]|\bos\.(?:environ|getenv)\b[^\n]{0,200}['"]PYTEST|\.startswith\(\s{0,4}['"]PYTEST|['"]PYTEST_?['"]\s{0,4}in\b/,
  },
  // --- Proctor --------------------------------------------------------------------------------
  {
    id: 'proctor',
    why: 'names Proctor: its runner (`proctor_pytest_runner`, `proctor-node-runner`), its options, variables or paths',
    pattern: /proctor/i,
  },
  {
    id: 'report-file',
    why: "names a runner's report: `report.json`, `REPORT`",
    pattern: /\breport\.json\b|\bREPORT\b/,
  },
  {
    id: 'argv-report',
    why: "reads the command line and writes a file in the same file: the runner's report path is an argument",
    scan: (file) => {
      const argv = file.added.filter((a) => /\bsys\.argv\b|\bprocess\.argv\b/.test(a.text));
      if (argv.length === 0) return [];
      const writes = file.added.some((a) =>
        /\bopen\([^)\n]{0,300}['"][wax]b?\+?['"]|\.write_(?:text|bytes)\(|\bwriteFile(?:Sync)?\(|\bcreateWriteStream\(|\bos\.open\(/.test(
          a.text,
        ),
      );
      return writes ? argv : [];
    },
  },
  // --- leaving early ------------------------------------------------------------------------
  {
    id: 'hard-exit',
    why: 'ends the process without unwinding (no test framework gets to report)',
    pattern:
      /\bos\._exit\s{0,4}\(|\bos\.abort\s{0,4}\(|\bos\.kill\s{0,4}\(\s{0,4}os\.getpid\(|\bprocess\.reallyExit\b|\bprocess\.abort\s{0,4}\(|\bprocess\.kill\s{0,4}\(\s{0,4}process\.pid\b|\bsignal\.raise_signal\(/,
  },
  {
    id: 'exit-at-import',
    why: 'exits when the module is loaded, before or instead of the tests',
    scope: 'python',
    moduleLevel: true,
    pattern:
      /(?<![\w.])(?<!def\s{1,8})(?:exit|quit)\s{0,4}\(|\bsys\.exit\b|\braise\s{1,4}SystemExit\b/,
  },
  {
    id: 'exit-at-import',
    why: 'exits when the module is loaded, before or instead of the tests',
    scope: 'javascript',
    moduleLevel: true,
    pattern: /\bprocess\.exit\s{0,4}\(|\bprocess\.exitCode\s{0,4}=(?!=)/,
  },
  {
    id: 'exit-at-import',
    why: 'exits when the script is sourced, before or instead of the tests',
    scope: 'shell',
    pattern: /^(?:exit|kill)\b/,
  },
  {
    id: 'exit-hook',
    why: 'runs code at process exit, after the tests: it can rewrite the exit status or a report',
    pattern:
      /\batexit\b|\bprocess\.(?:on|once|addListener|prependListener|prependOnceListener)\s{0,4}\(\s{0,4}['"](?:exit|beforeExit)['"]|^\s{0,40}trap\b.{0,200}\b(?:EXIT|0)\s{0,4}$|\bsys\.excepthook\s{0,4}=(?!=)/,
  },
  // --- reaching into the interpreter -----------------------------------------------------------
  {
    id: 'module-table',
    why: 'replaces loaded modules or the import machinery (`sys.modules[…] =`, `require.cache`)',
    pattern:
      /\bsys\.modules\s{0,4}\[[^\]\n]{1,200}\]\s{0,4}(?:\.\s{0,4}\w{1,100}\s{0,4})?=(?!=)|\bsys\.modules\.(?:update|setdefault|pop|clear)\s{0,4}\(|\bdel\s{1,4}sys\.modules\b|\bsys\.(?:meta_path|path_hooks)\b|\brequire\.cache\b|\b[Mm]odule\._(?:load|resolveFilename|cache|extensions|compile|findPath)\b|\b[Mm]odule\.prototype\.(?:require|_compile)\b|\brequire\(\s{0,4}['"](?:node:)?module['"]\s{0,4}\)\.(?:_load|_resolveFilename|_cache|_extensions|_compile|_findPath|prototype|register)\b|\bregisterHooks\s{0,4}\(|\bmodule\.register\s{0,4}\(/,
  },
  {
    id: 'builtins',
    why: "replaces a builtin (`open`, `__import__`): every module's behaviour changes",
    scope: 'python',
    pattern:
      /\b__builtins__\b|\bbuiltins\s{0,4}\.\s{0,4}\w{1,100}\s{0,4}=(?!=)|\bsetattr\(\s{0,4}builtins\b|\bbuiltins\.__import__\b/,
  },
  {
    id: 'object-walk',
    why: "finds other code's objects or frames (`gc.get_objects`, `sys._getframe`, `f_back`)",
    pattern:
      /\bgc\.get_(?:objects|referrers|referents)\b|\bsys\._(?:getframe|current_frames)\b|\.f_(?:back|globals|locals|builtins)\b|\binspect\.(?:stack|currentframe|getouterframes)\b/,
  },
  {
    id: 'trace-hooks',
    why: 'watches or rewrites other code as it runs (`sys.settrace`, audit hooks)',
    pattern:
      /\bsys\.(?:settrace|setprofile|addaudithook|monitoring)\b|\bthreading\.(?:settrace|setprofile)\w{0,20}\b/,
  },
  {
    id: 'process-internals',
    why: 'reaches the process or the machine below the language: `/proc/`, ptrace, ctypes, native bindings',
    pattern:
      /\/proc\/|\bptrace\b|\bPTRACE_|\bctypes\b|\bcffi\b|\bprocess\.(?:binding|dlopen)\b|\binternalBinding\b|--expose-internals/,
  },
  {
    id: 'runtime-options',
    why: 'changes how every Python or Node process starts (`NODE_OPTIONS`, `--require`, loaders, `PYTHONSTARTUP`)',
    pattern:
      /\bNODE_OPTIONS\b|\bPYTHONSTARTUP\b|--(?:experimental-)?loader\b|--import[= ]|--require[= ]|\bnode-options\s{0,4}=/,
  },
  {
    id: 'framework-write',
    why: "writes to a test framework's objects (`pytest.x =`, `setattr(unittest.TestCase, …)`, `globalThis.expect =`, `Object.defineProperty(assert, …)`)",
    pattern:
      /^\s{0,40}(?:del\s{1,4})?(?:pytest|_pytest|unittest(?!\.mock\b)|pluggy|doctest)(?:\.\w{1,100}){1,8}\s{0,4}(?:[-+*/|&]?=)(?!=)|^(?:delete\s)?(?:(?:globalThis|global|window|self)\.(?:expect|assert|it|test|describe|suite|jest|vi|chai|before|after|beforeEach|afterEach)(?:\.[\w*$]{1,100}){0,8}|(?:require\("(?:node:)?(?:assert|test)(?:\/strict)?"\)|expect|assert|chai|jest|vi)(?:\.[\w*$]{1,100}){1,8}) (?:[-+*/|&]?=)$/,
  },
  {
    id: 'computed-name',
    why: 'a name built from pieces for an import or an attribute (`__import__("p" + "ytest")`), or a computed name on `sys`, `builtins`, `globalThis` and their kin',
    scan: (file) => file.added.filter((a) => file.reading.computed.has(a.line)),
  },
  // --- files that configure the tests -------------------------------------------------------
  {
    id: 'conftest',
    why: 'a conftest.py: pytest loads it as a plugin before any test',
    path: /(?:^|\/)conftest\.py$/,
  },
  {
    id: 'pytest-config-file',
    why: "pytest's own configuration file",
    path: /(?:^|\/)\.?pytest\.ini$/,
  },
  {
    id: 'python-startup',
    why: 'run by every Python process at start-up: `sitecustomize`, `usercustomize`, `.pth` files',
    path: /(?:^|\/)(?:sitecustomize|usercustomize)\.py$|\.pth$/,
  },
  {
    id: 'package-metadata',
    why: 'installed-package metadata (entry points load plugins), or a vendored package',
    path: /\.(?:dist|egg)-info(?:\/|$)|\.egg-link$|(?:^|\/)(?:site-packages|node_modules)\//,
  },
  {
    id: 'node-test-config',
    why: "a JavaScript test runner's configuration, or npm's",
    path: /(?:^|\/)(?:\.mocharc(?:\.[a-z]{1,6})?|\.c8rc(?:\.json)?|\.nycrc(?:\.[a-z]{1,6})?|\.taprc|\.npmrc|karma\.conf\.[a-z]{1,6}|(?:jest|vitest|ava|playwright|karma)\.config\.[a-z]{1,6})$/,
  },
  {
    id: 'package-json-test',
    why: "a test-related key of package.json: the test script, a test runner's configuration",
    scan: (file) =>
      file.paths.some((p) => /(?:^|\/)package\.json$/.test(p))
        ? file.added.filter((a) =>
            /^\s{0,40}"(?:(?:pre|post)?test(?::[\w:.-]{0,60})?|jest|mocha|ava|c8|nyc|tap|vitest)"\s{0,4}:/.test(
              a.text,
            ),
          )
        : [],
  },
];

/**
 * The hit of a file whose added code a reader failed on. It is no rule of the table: no line
 * is matched; the file was screened by its raw lines alone, and a reader's failure on a
 * candidate's code must not pass for a clean screen.
 */
export const UNREAD_RULE = 'unread';

/** What reads a file's added code for its other spellings (the readers, replaceable in tests). */
export interface CodeReaders {
  python: (hunks: readonly CodeLine[][]) => CodeReading;
  javascript: (hunks: readonly CodeLine[][], path: string) => CodeReading;
}

const READERS: CodeReaders = { python: readPython, javascript: readJavaScript };

/** Screens the added lines and the paths of `patch` (a filtered git diff). */
export function screenDiff(patch: Buffer, readers: CodeReaders = READERS): ScreenResult {
  const result: ScreenResult = { hits: [], count: 0, unscreened: 0 };
  const add = (hit: ScreenHit) => {
    result.count += 1;
    if (result.hits.length < MAX_SCREEN_HITS) result.hits.push(hit);
  };
  for (const section of parseDiff(patch)) {
    const { change } = section;
    const paths = [change.oldPath, change.newPath].filter((p): p is string => p !== null);
    const path = change.newPath ?? change.oldPath ?? '';
    for (const rule of SCREEN_RULES) {
      const named = rule.path ? paths.find((p) => rule.path?.test(p)) : undefined;
      if (named !== undefined) add({ rule: rule.id, file: path, line: null, excerpt: show(named) });
    }
    if (change.binary) {
      result.unscreened += 1;
      continue;
    }
    if (change.hunks === 0 || paths.every((p) => DOCS.test(p))) continue;
    const { added, hunks } = addedLines(patch.subarray(section.start, section.end), path);
    let reading = newReading();
    try {
      if (PY.test(path)) reading = readers.python(readable(hunks));
      else if (JS.test(path)) reading = readers.javascript(readable(hunks), path);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      add({
        rule: UNREAD_RULE,
        file: path,
        line: null,
        excerpt: show(`the reader failed: ${why}`),
      });
    }
    const file: ScreenedFile = { path, paths, added, reading };
    for (const hit of screenFile(file)) add(hit);
  }
  return result;
}

function screenFile(file: ScreenedFile): ScreenHit[] {
  const hits: ScreenHit[] = [];
  const seen = new Set<string>();
  for (const rule of SCREEN_RULES) {
    if (rule.scope !== undefined && !inScope(file.path, rule.scope)) continue;
    const lines: Array<{ added: AddedLine; at: number }> = [];
    if (rule.scan) for (const added of rule.scan(file)) lines.push({ added, at: 0 });
    if (rule.pattern) {
      for (const added of file.added) {
        if (rule.moduleLevel && !added.moduleLevel) continue;
        const match = rule.pattern.exec(added.text);
        if (match) lines.push({ added, at: match.index });
        else if (file.reading.spellings.get(added.line)?.some((s) => rule.pattern?.test(s))) {
          lines.push({ added, at: 0 });
        }
      }
    }
    for (const { added, at } of lines) {
      const key = `${rule.id}:${added.line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      hits.push({
        rule: rule.id,
        file: file.path,
        line: added.line,
        excerpt: around(added.text, at),
      });
    }
  }
  return hits.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

function inScope(path: string, scope: Scope): boolean {
  switch (scope) {
    case 'python':
      return PY.test(path);
    case 'javascript':
      return JS.test(path);
    case 'shell':
      return SH.test(path);
  }
}

// A column-0 statement that opens a block run at load time (not a function or class body):
// what is indented under it runs when the module is imported. `if __name__ == "__main__":`
// is the script idiom: it does not run on import.
const PY_TOP_BLOCK = /^(?:if|elif|else|try|except|finally|for|while|with|async\s+(?:for|with))\b/;
const PY_MAIN_GUARD = /^if\s+__name__\s*==/;
const JS_TOP_BLOCK =
  /^(?:if|else|try|catch|finally|for|while|do|switch|\{|\}\s*(?:else|catch|finally))\b|^\{/;

/**
 * The `+` lines of one file's section, with their new line numbers and where they sit, and
 * each hunk as the new file has it (context and added lines) for the code readers.
 */
function addedLines(bytes: Buffer, path: string): { added: AddedLine[]; hunks: CodeLine[][] } {
  const text = bytes.toString('utf8');
  const added: AddedLine[] = [];
  const hunks: CodeLine[][] = [];
  let hunk: CodeLine[] = [];
  const python = PY.test(path);
  const javascript = JS.test(path);
  let inHunks = false;
  let next = 0;
  // The last column-0 line of the hunk so far (context or added); null until one is seen.
  let top: string | null = null;
  let section: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('@@ -')) {
      inHunks = true;
      hunk = [];
      hunks.push(hunk);
      next = Number(/\+(\d+)/.exec(line)?.[1] ?? '1');
      top = null;
      section = null;
      continue;
    }
    if (!inHunks) continue;
    const kind = line[0];
    if (kind === '-' || kind === '\\') continue;
    if (kind !== '+' && kind !== ' ' && line !== '') continue;
    const body = line.slice(1);
    if (/^\S/.test(body)) top = body;
    const header = /^\s{0,8}\[+\s{0,8}([^\]\s]{1,100})\s{0,8}\]/.exec(body);
    if (header) section = header[1] ?? null;
    hunk.push({ line: next, text: body, added: kind === '+' });
    if (kind === '+') {
      added.push({
        line: next,
        text: body,
        moduleLevel: moduleLevel(body, top, python, javascript),
        section,
      });
    }
    next += 1;
  }
  return { added, hunks };
}

function moduleLevel(body: string, top: string | null, python: boolean, js: boolean): boolean {
  if (/^\S/.test(body)) return true;
  if (top === null) return false;
  if (python) return PY_TOP_BLOCK.test(top) && !PY_MAIN_GUARD.test(top);
  if (js) return JS_TOP_BLOCK.test(top);
  return false;
}

/** The line trimmed to MAX_EXCERPT_CHARS, keeping the match in view. */
function around(text: string, at: number): string {
  const line = text.trim();
  const offset = text.length - text.trimStart().length;
  const index = Math.max(0, at - offset);
  if (line.length <= MAX_EXCERPT_CHARS) return show(line);
  const start = Math.max(0, Math.min(index - 40, line.length - MAX_EXCERPT_CHARS + 1));
  const cut = line.slice(start, start + MAX_EXCERPT_CHARS - (start > 0 ? 2 : 1));
  return show(`${start > 0 ? '…' : ''}${cut}…`);
}

// One line for a log entry: tabs as spaces, other control characters escaped, bounded.
function show(text: string): string {
  const line = text
    .replace(/\t/g, ' ')
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return line.length > MAX_EXCERPT_CHARS ? `${line.slice(0, MAX_EXCERPT_CHARS - 1)}…` : line;
}
