// The screen reads code, not spellings: each forgery of the rule table written another way
// (an alias, a name built from pieces, a computed attribute, a module reached by a folded
// specifier) is a hit of the same rule, and honest code of the same shape is none.
import { describe, expect, it } from 'vitest';
import { MAX_READ_CHARS } from '../../src/oracle/screen-code.js';
import { screenDiff } from '../../src/oracle/screen.js';
import { addFile } from '../helpers/diffs.js';

const rulesOf = (path: string, lines: string[]) => [
  ...new Set(screenDiff(Buffer.from(addFile(path, lines))).hits.map((h) => h.rule)),
];

// [the rule it must hit, path, lines]
const RESPELLED: Array<[rule: string, path: string, lines: string[]]> = [
  // Python: aliases
  ['module-table', 'pkg/x.py', ['from sys import meta_path as m', 'm.insert(0, Finder())']],
  ['module-table', 'pkg/x.py', ['import sys as s', 's.meta_path.append(Finder())']],
  ['module-table', 'pkg/x.py', ['import sys', 'mods = sys.modules', 'mods["pytest"] = fake']],
  ['module-table', 'pkg/x.py', ['from sys import modules', 'modules["pytest"] = fake']],
  ['object-walk', 'pkg/x.py', ['from sys import _getframe as g', 'g(1)']],
  ['object-walk', 'pkg/x.py', ['from gc import get_objects', 'objs = get_objects()']],
  ['object-walk', 'pkg/x.py', ['import inspect as i', 'f = i.currentframe()']],
  ['object-walk', 'pkg/x.py', ['x = sys._getframe(1).f_globals']],
  ['hard-exit', 'pkg/x.py', ['from os import _exit as bye', 'def f():', '    bye(0)']],
  ['exit-at-import', 'pkg/x.py', ['from sys import exit as leave', 'leave(0)']],
  ['builtins', 'pkg/x.py', ['import builtins as b', 'b.open = fake_open']],
  ['builtins', 'pkg/x.py', ['b = __import__("builtins")', 'b.open = fake_open']],
  ['module-table', 'pkg/x.py', ['ｓｙｓ.meta_path.clear()']],
  ['module-table', 'pkg/x.py', ['delattr(sys, "meta" + "_path")']],
  ['trace-hooks', 'pkg/x.py', ['import sys as _s', '_s.settrace(tracer)']],
  ['pytest-internals', 'pkg/x.py', ['mod = __import__("_py" "test.reports")']],
  // Python: names built from pieces
  ['module-table', 'pkg/x.py', ['finders = getattr(sys, "meta" + "_path")']],
  ['module-table', 'pkg/x.py', ['finders = getattr(sys, "".join(["meta", "_path"]))']],
  ['module-table', 'pkg/x.py', ['finders = getattr(sys, f"{\'meta\'}_path")']],
  ['module-table', 'pkg/x.py', ['finders = getattr(sys, "meta\\x5fpath")']],
  ['hard-exit', 'pkg/x.py', ['getattr(__import__("o" + "s"), "_ex" + "it")(0)']],
  ['module-table', 'pkg/x.py', ['vars(sys)["meta_path"].append(Finder())']],
  ['module-table', 'pkg/x.py', ['sys.__dict__["meta" "_path"].append(Finder())']],
  ['computed-name', 'pkg/x.py', ['vars(builtins)[name] = hook']],
  ['hard-exit', 'pkg/x.py', ['import importlib', 'importlib.import_module("os")._exit(0)']],
  ['builtins', 'pkg/x.py', ['import builtins', 'setattr(builtins, "op" + "en", fake)']],
  ['test-detection', 'pkg/x.py', ['if os.environ.get("PYTEST_" "CURRENT_TEST"):', '    x = 1']],
  ['test-detection', 'pkg/x.py', ['if os.getenv("PYTEST_" + "XDIST_WORKER"):', '    x = 1']],
  ['test-detection', 'pkg/x.py', ['hit = any(k.startswith("PYTEST") for k in os.environ)']],
  ['computed-name', 'pkg/x.py', ['p = __import__("p" + "ytest")']],
  ['computed-name', 'pkg/x.py', ['p = __import__(chr(112) + "ytest")']],
  ['computed-name', 'pkg/x.py', ['setattr(builtins, name, value)']],
  ['framework-write', 'pkg/x.py', ['from _pytest import reports as r', 'r.TestReport.outcome = 1']],
  ['framework-write', 'pkg/x.py', ['import unittest as u', 'u.TestCase.run = fake_run']],
  ['framework-write', 'pkg/x.py', ['from unittest import TestCase', 'TestCase.run = fake_run']],
  // JavaScript and TypeScript
  ['node-test-internals', 'src/x.js', ["const t = require('node:' + 'test');", 't.run({});']],
  ['node-test-internals', 'src/x.mjs', ["const { run: go } = await import('node:test');"]],
  ['computed-name', 'src/x.js', ["const a = require('node:' + 'assert');"]],
  ['computed-name', 'src/x.ts', ["const a = await import(`node:${'assert'}`);"]],
  ['computed-name', 'src/x.js', ['globalThis[name] = fake;']],
  ['framework-write', 'src/x.js', ['globalThis.expect = () => ({ toBe() {} });']],
  ['framework-write', 'src/x.js', ["globalThis['exp' + 'ect'] = fake;"]],
  ['framework-write', 'src/x.js', ["const a = require('node:assert');", 'a.equal = () => {};']],
  ['framework-write', 'src/x.mjs', ["import assert from 'assert';", 'assert.ok = () => {};']],
  ['framework-write', 'src/x.ts', ["import * as t from 'node:test';", 'Object.assign(t, {});']],
  ['framework-write', 'src/x.js', ["Object.defineProperty(assert, 'equal', { value() {} });"]],
  ['framework-write', 'src/x.js', ["Reflect.set(globalThis, 'it', fake);"]],
  ['module-table', 'src/x.js', ["const M = require('mod' + 'ule');", 'M._load = hook;']],
  ['module-table', 'src/x.js', ['const r = require;', "delete r['cache'][key];"]],
  ['module-table', 'src/x.ts', ['const r: NodeRequire = require;', "delete r['cache'][key];"]],
  [
    'framework-write',
    'src/x.ts',
    ['export function f(x: number): void {', '  (globalThis as any).expect = x;', '}'],
  ],
  ['hard-exit', 'src/x.ts', ['const p = process as NodeJS.Process;', 'p.reallyExit(0);']],
  [
    'computed-name',
    'src/x.tsx',
    ['const el = <div onClick={() => globalThis["ex" + "pect"]}>x</div>;'],
  ],
  ['hard-exit', 'src/x.js', ['const p = process;', 'function f() { p.reallyExit(0); }']],
  ['hard-exit', 'src/x.js', ["process['really' + 'Exit'](0);"]],
  ['hard-exit', 'src/x.js', ["Reflect.get(process, 'really' + 'Exit')(0);"]],
  [
    'hard-exit',
    'src/x.js',
    ['process[String.fromCharCode(114, 101, 97, 108, 108, 121) + "Exit"](0);'],
  ],
  ['hard-exit', 'src/x.js', ["process['\\x72eallyExit'](0);"]],
  ['exit-at-import', 'src/x.js', ['const { exit } = process;', 'exit(0);']],
  ['exit-hook', 'src/x.js', ['const p = process;', "p.on('ex' + 'it', () => {});"]],
  ['process-internals', 'src/x.js', ["process[['bin', 'ding'].join('')]('fs');"]],
  ['test-detection', 'src/x.js', ["if (process.env['NODE_TEST_' + 'CONTEXT']) skip();"]],
];

describe('screenDiff reads code, not spellings', () => {
  for (const [rule, path, lines] of RESPELLED) {
    it(`${rule}: ${path}: ${lines.join(' / ')}`, () => {
      expect(rulesOf(path, lines)).toContain(rule);
    });
  }

  it('names the line that does it, with its own text as the excerpt', () => {
    const result = screenDiff(
      Buffer.from(
        addFile('pkg/x.py', ['import os', 'from sys import meta_path as m', 'm.clear()']),
      ),
    );
    expect(result.hits).toEqual([
      {
        rule: 'module-table',
        file: 'pkg/x.py',
        line: 2,
        excerpt: 'from sys import meta_path as m',
      },
      { rule: 'module-table', file: 'pkg/x.py', line: 3, excerpt: 'm.clear()' },
    ]);
  });

  it('reads an alias the hunk shows only as context', () => {
    const diff = [
      'diff --git a/pkg/x.py b/pkg/x.py',
      'index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644',
      '--- a/pkg/x.py',
      '+++ b/pkg/x.py',
      '@@ -1,2 +1,3 @@',
      ' from sys import meta_path as finders',
      ' ',
      '+finders.clear()',
      '',
    ].join('\n');
    expect(screenDiff(Buffer.from(diff)).hits.map((h) => [h.rule, h.line])).toEqual([
      ['module-table', 3],
    ]);
  });

  it('does not read code inside comments and strings as code', () => {
    expect(
      rulesOf('pkg/x.py', [
        '# from sys import meta_path as m',
        'm = 1',
        'm.insert(0, 2)',
        'doc = "getattr(sys, name)"',
      ]),
    ).toEqual([]);
  });
});

describe('screenDiff on honest code of the same shapes', () => {
  it('does not flag ordinary aliases, getattr on objects, import_module of a setting, joins', () => {
    expect(
      rulesOf('pkg/app.py', [
        'import os.path as osp',
        'from importlib import import_module',
        'from django.utils import timezone as tz',
        'def load(self, name, path):',
        '    mod = import_module(path)',
        '    module = __import__(path, fromlist=[name])',
        '    value = getattr(self, "clean_" + name)',
        '    setattr(self, name, value)',
        '    handler = getattr(mod, name, None)',
        '    fields = vars(self)[name]',
        '    cls = type(self).__dict__[name]',
        '    label = ", ".join(["a", "b"])',
        '    msg = ("first part of a long message " "and its second part")',
        '    env = os.environ.get("HOME", "")',
        '    return osp.join(path, tz.now().isoformat())',
      ]),
    ).toEqual([]);
  });

  it('does not read a name the file binds again as the alias it was imported as', () => {
    expect(
      rulesOf('tests/test_x.py', [
        'import pytest',
        'from unittest import mock, TestCase',
        'def test_a(TestCase):',
        '    TestCase.maxDiff = None',
        'def test_b():',
        '    mock = MagicMock()',
        '    mock.return_value = 3',
        'for TestCase in cases:',
        '    TestCase.enabled = True',
        'with patch("x") as m:',
        '    unittest.mock.sentinel.x = 1',
      ]),
    ).toEqual([]);
  });

  it('keeps an alias of the interpreter machinery even where the name is bound again', () => {
    expect(
      rulesOf('pkg/x.py', ['import sys as s', 'if 0:', '    s = 0', 's.meta_path.clear()']),
    ).toEqual(['module-table']);
  });

  it('does not flag ordinary module code in JavaScript or TypeScript', () => {
    expect(
      rulesOf('src/app.ts', [
        "import assert from 'node:assert';",
        "import { readFile } from 'node:fs/promises';",
        "const strict: typeof import('assert') = require('assert');",
        'const mod = await import(`./locales/${lang}.js`);',
        'export function f(key: string, o: Record<string, number>): number {',
        '  assert.ok(key);',
        '  const env = process.env[key];',
        '  module.exports[key] = o[key];',
        '  return o[`${key}_count`] ?? 0;',
        '}',
      ]),
    ).toEqual([]);
  });

  it('reads a line of pieces just under MAX_READ_CHARS in Python and JavaScript in bounded time', () => {
    const pieces = '"a" + '.repeat(Math.floor((MAX_READ_CHARS - 100) / 6));
    const started = Date.now();
    expect(rulesOf('pkg/x.py', [`x = getattr(sys, ${pieces}"b")`])).toEqual(['computed-name']);
    expect(rulesOf('src/x.js', [`const x = require(${pieces}'b');`])).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10000);
  });
});

describe('screenDiff on code the readers cannot make sense of', () => {
  it('survives unterminated strings, stray brackets, 100,000 nested brackets and 20,000 nested calls, in bounded time', () => {
    const deep = (open: string, close: string) =>
      `${open.repeat(100_000)}"a"${close.repeat(100_000)}`;
    const started = Date.now();
    for (const [path, lines] of [
      ['pkg/x.py', ['x = """never closed', 'y = 1']],
      ['pkg/x.py', ["x = 'no end", ')))]]]', 'f(((']],
      ['pkg/x.py', [`x = ${deep('(', ')')}`]],
      ['pkg/x.py', [`x = ${deep('[', ']')}`, '\\']],
      ['src/x.js', [`const x = ${deep('(', ')')};`]],
      ['src/x.ts', [`const x = ${deep('[', ']')};`, 'const y = `never closed']],
      ['src/x.jsx', ['<div>{{{', '</span>']],
      ['pkg/x.py', [`x = ${'f('.repeat(20_000)}1${')'.repeat(20_000)}`]],
      ['pkg/x.py', [`x = ${'getattr('.repeat(20_000)}o${', "a")'.repeat(20_000)}`]],
      ['pkg/x.py', [`x = ${'vars('.repeat(20_000)}o${')["a"]'.repeat(20_000)}`]],
      ['src/x.js', [`x = ${'f('.repeat(20_000)}1${')'.repeat(20_000)};`]],
    ] as Array<[string, string[]]>) {
      expect(rulesOf(path, lines), path).toEqual([]);
    }
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("keeps the raw line's hit when a hunk starts inside a docstring and misleads the tokenizer", () => {
    const diff = [
      'diff --git a/pkg/x.py b/pkg/x.py',
      'index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644',
      '--- a/pkg/x.py',
      '+++ b/pkg/x.py',
      '@@ -10,2 +10,4 @@ def f():',
      '     the end of a docstring',
      '     """',
      '+    sys.meta_path.clear()',
      '+    return """another',
      '',
    ].join('\n');
    expect(screenDiff(Buffer.from(diff)).hits.map((h) => [h.rule, h.line])).toEqual([
      ['module-table', 12],
    ]);
  });
});
