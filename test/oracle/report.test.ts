// The runner's report is written by code the candidate controls: these tests cover both
// formats' happy paths and the hostile ones (DTDs, entity bombs, XXE, deep nesting, floods,
// prototype keys, oversized and malformed input), which must all end in a short REPORT_INVALID.
import { describe, expect, it } from 'vitest';
import { isProctorError, type ProctorError } from '../../src/errors.js';
import {
  DEFAULT_REPORT_LIMITS,
  excerpt,
  parseReport,
  printable,
  type ReportLimits,
  type TestStatus,
} from '../../src/oracle/report.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function parse(text: string, limits?: ReportLimits): Map<string, TestStatus> {
  return parseReport(bytes(text), limits).tests;
}

/** Runs `fn`, expecting a short single-line REPORT_INVALID whose message matches `pattern`. */
function expectInvalid(fn: () => unknown, pattern: RegExp): ProctorError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(isProctorError(caught, 'REPORT_INVALID'), String(caught)).toBe(true);
  const error = caught as ProctorError;
  expect(error.message).toMatch(pattern);
  expect(error.message).not.toContain('\n');
  expect(error.message.length).toBeLessThan(400);
  expect(error.stack ?? '').not.toContain(error.message.repeat(2));
  return error;
}

const json = (tests: unknown[]): string => JSON.stringify({ schema: 1, tests });

describe('parseReport: Proctor JSON', () => {
  it('reads every test with its status', () => {
    const report = parseReport(
      bytes(
        json([
          { id: 'a::one', status: 'passed' },
          { id: 'a::two', status: 'failed' },
          { id: 'b', status: 'error' },
          { id: 'c', status: 'skipped' },
        ]),
      ),
    );
    expect(report.format).toBe('json');
    expect([...report.tests]).toEqual([
      ['a::one', 'passed'],
      ['a::two', 'failed'],
      ['b', 'error'],
      ['c', 'skipped'],
    ]);
    expect(report.problems).toEqual([]);
  });

  it('accepts a UTF-8 BOM and leading whitespace', () => {
    const text = '\uFEFF \n\t' + json([{ id: 'x', status: 'passed' }]);
    expect(parse(text)).toEqual(new Map([['x', 'passed']]));
  });

  it('accepts an empty test list', () => {
    expect(parse(json([])).size).toBe(0);
  });

  it('refuses unknown keys at the top level and in a test', () => {
    expectInvalid(() => parse('{"schema":1,"tests":[],"extra":true}'), /unknown key `extra`/);
    expectInvalid(
      () => parse(json([{ id: 'x', status: 'passed', time: 1 }])),
      /report\.tests\[0\]: unknown key `time`/,
    );
  });

  it("reads each test's optional SWE-bench status, and refuses one SWE-bench does not have", () => {
    const report = parseReport(
      bytes(
        json([
          { id: 'a', status: 'passed', swebench: 'PASSED' },
          { id: 'b', status: 'skipped', swebench: 'ABSENT' },
          { id: 'c', status: 'skipped', swebench: 'XFAIL' },
          { id: 'd', status: 'failed' },
          { id: 'c', status: 'skipped', swebench: 'SKIPPED' },
        ]),
      ),
    );
    expect(report.swebench).toEqual(
      new Map([
        ['a', 'PASSED'],
        ['b', 'ABSENT'],
        ['c', 'SKIPPED'],
      ]),
    );
    expect(parseReport(bytes('<testsuite/>')).swebench.size).toBe(0);
    expectInvalid(
      () => parse(json([{ id: 'x', status: 'passed', swebench: 'XPASS' }])),
      /report\.tests\[0\]\.swebench/,
    );
  });

  it("reads the report's optional cause, bounded", () => {
    const text = (cause: string) => JSON.stringify({ schema: 1, tests: [], cause });
    expect(parseReport(bytes(text('ModuleNotFoundError: flask'))).cause).toBe(
      'ModuleNotFoundError: flask',
    );
    expect(parseReport(bytes(json([]))).cause).toBeUndefined();
    expectInvalid(() => parse(text('x'.repeat(4001))), /report\.cause/);
  });

  it('refuses a wrong schema, a missing list, a bad status and bad IDs', () => {
    expectInvalid(() => parse('{"schema":2,"tests":[]}'), /report\.schema/);
    expectInvalid(() => parse('{"schema":1}'), /report\.tests/);
    expectInvalid(() => parse(json([{ id: 'x', status: 'ok' }])), /report\.tests\[0\]\.status/);
    expectInvalid(() => parse(json([{ id: '', status: 'passed' }])), /report\.tests\[0\]\.id/);
    expectInvalid(() => parse(json([{ id: 7, status: 'passed' }])), /report\.tests\[0\]\.id/);
    expectInvalid(
      () => parse(json([{ id: 'x'.repeat(1001), status: 'passed' }])),
      /report\.tests\[0\]\.id/,
    );
    expectInvalid(() => parse(json([{ id: 'a\0b', status: 'passed' }])), /NUL/);
    expect(parse(json([{ id: 'x'.repeat(1000), status: 'passed' }])).size).toBe(1);
  });

  it('refuses malformed JSON without echoing a huge input', () => {
    expectInvalid(() => parse('{"schema":1,"tests":[,]}'), /malformed JSON/);
    expectInvalid(() => parse('{"schema":1,"tests":[]'), /malformed JSON/);
    expectInvalid(() => parse('{' + 'x'.repeat(100_000)), /malformed JSON/);
  });

  it('refuses absurdly deep JSON without overflowing the stack', () => {
    const deep = '{"schema":1,"tests":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}';
    expectInvalid(() => parse(deep), /report\.tests\[0\]|malformed JSON/);
  });

  it('keeps __proto__ and constructor as plain test IDs and refuses a __proto__ key', () => {
    const tests = parse(
      json([
        { id: '__proto__', status: 'failed' },
        { id: 'constructor', status: 'passed' },
        { id: 'hasOwnProperty', status: 'skipped' },
      ]),
    );
    expect(tests.get('__proto__')).toBe('failed');
    expect(tests.get('constructor')).toBe('passed');
    expect(tests.get('hasOwnProperty')).toBe('skipped');
    expect(tests.get('toString')).toBeUndefined();
    expectInvalid(
      () => parse('{"schema":1,"tests":[],"__proto__":{"polluted":true}}'),
      /unknown key `__proto__`/,
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses more tests than the limit', () => {
    const four = json(['a', 'b', 'c', 'd'].map((id) => ({ id, status: 'passed' })));
    expectInvalid(() => parse(four, { maxTests: 3 }), /more than 3 tests/);
    expect(parse(four, { maxTests: 4 }).size).toBe(4);
  });
});

describe('parseReport: repeated test IDs', () => {
  const statuses = (...list: TestStatus[]): string =>
    json(list.map((status) => ({ id: 't', status })));

  it('keeps the worst status: error > failed > skipped > passed', () => {
    expect(parse(statuses('passed', 'failed', 'passed')).get('t')).toBe('failed');
    expect(parse(statuses('skipped', 'passed')).get('t')).toBe('skipped');
    expect(parse(statuses('failed', 'skipped')).get('t')).toBe('failed');
    expect(parse(statuses('failed', 'error', 'failed')).get('t')).toBe('error');
    expect(parse(statuses('passed', 'passed')).get('t')).toBe('passed');
  });

  it('notes each repeated ID in problems', () => {
    const report = parseReport(bytes(statuses('passed', 'failed', 'passed')));
    expect(report.problems).toEqual(['test ID "t" reported 3 times; kept failed']);
  });

  it('merges repeated JUnit testcases the same way', () => {
    const xml = `<testsuite>
      <testcase classname="m" name="t"/>
      <testcase classname="m" name="t"><skipped/></testcase>
      <testcase classname="m" name="t"/>
    </testsuite>`;
    expect(parse(xml)).toEqual(new Map([['m::t', 'skipped']]));
  });
});

describe('parseReport: JUnit XML', () => {
  it('reads nested suites, classname::name, empty classname and every status', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!-- written by a runner -->
<testsuites name="all" tests="6">
  <testsuite name="outer">
    <properties><property name="python" value="3.12"/></properties>
    <testcase classname="tests.test_calc" name="test_add" time="0.01"/>
    <testcase classname="tests.test_calc" name="test_div">
      <failure message="ZeroDivisionError">Traceback…</failure>
      <system-out>printed</system-out>
    </testcase>
    <testsuite name="inner">
      <testcase classname="" name="test_empty_classname"><error message="boom"/></testcase>
      <testcase name="test_no_classname"><skipped message="later"/></testcase>
      <testsuite name="innermost">
        <testcase classname="deep.Suite" name="test_deep"></testcase>
      </testsuite>
    </testsuite>
  </testsuite>
  <testsuite name="second"><testcase classname="x" name="y"/></testsuite>
</testsuites>`;
    const report = parseReport(bytes(xml));
    expect(report.format).toBe('junit');
    expect([...report.tests]).toEqual([
      ['tests.test_calc::test_add', 'passed'],
      ['tests.test_calc::test_div', 'failed'],
      ['test_empty_classname', 'error'],
      ['test_no_classname', 'skipped'],
      ['deep.Suite::test_deep', 'passed'],
      ['x::y', 'passed'],
    ]);
  });

  it('accepts a lone <testsuite> root', () => {
    expect(parse('<testsuite name="s"><testcase classname="c" name="n"/></testsuite>')).toEqual(
      new Map([['c::n', 'passed']]),
    );
  });

  it('accepts an empty suite', () => {
    expect(parse('<testsuites/>').size).toBe(0);
  });

  it('gives a testcase its worst child: error > failure > skipped', () => {
    const xml = `<testsuite>
      <testcase name="a"><skipped/><failure/></testcase>
      <testcase name="b"><failure/><error/></testcase>
      <testcase name="c"><flakyFailure message="passed on rerun"/><system-err/></testcase>
    </testsuite>`;
    expect([...parse(xml)]).toEqual([
      ['a', 'failed'],
      ['b', 'error'],
      ['c', 'passed'],
    ]);
  });

  it('decodes predefined entities and character references in IDs, and nothing else', () => {
    const xml = `<testsuite><testcase classname="a&amp;b" name="&lt;&gt;&quot;&apos; &#65;&#x42;&#x1F600; &custom; &#0;"/></testsuite>`;
    expect([...parse(xml).keys()]).toEqual(['a&b::<>"\' AB\u{1F600} &custom; &#0;']);
  });

  it('keeps IDs exactly as written, spaces included', () => {
    expect([...parse('<testsuite><testcase name=" spaced "/></testsuite>').keys()]).toEqual([
      ' spaced ',
    ]);
  });

  it('keeps __proto__ and constructor as plain test IDs', () => {
    const xml = `<testsuite>
      <testcase classname="" name="__proto__"><failure/></testcase>
      <testcase name="constructor"/>
      <testcase classname="__proto__" name="prototype"/>
    </testsuite>`;
    const tests = parse(xml);
    expect(tests.get('__proto__')).toBe('failed');
    expect(tests.get('constructor')).toBe('passed');
    expect(tests.get('__proto__::prototype')).toBe('passed');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses an element named __proto__ instead of building an object with it', () => {
    expectInvalid(() => parse('<testsuite><__proto__ polluted="1"/></testsuite>'), /malformed/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ignores test output that looks like markup inside CDATA and comments', () => {
    const xml = `<testsuite><testcase name="t"><system-out><![CDATA[<!DOCTYPE html><html><testcase name="fake"/>]]></system-out></testcase>
      <!-- <!DOCTYPE x> <testcase name="also-fake"/> --></testsuite>`;
    expect([...parse(xml)]).toEqual([['t', 'passed']]);
  });

  it('reads a report with megabytes of captured output', () => {
    const output = 'line of output & more\n'.replace('&', '&amp;').repeat(200_000);
    const xml = `<testsuite><testcase name="t"><failure>${output}</failure><system-out>${output}</system-out></testcase></testsuite>`;
    expect(xml.length).toBeGreaterThan(8_000_000);
    expect(parse(xml)).toEqual(new Map([['t', 'failed']]));
  });

  it('refuses a testcase without a name and IDs that break the ID rules', () => {
    expectInvalid(() => parse('<testsuite><testcase classname="c"/></testsuite>'), /no name/);
    expectInvalid(() => parse('<testsuite><testcase name=""/></testsuite>'), /empty/);
    expectInvalid(
      () => parse(`<testsuite><testcase name="${'n'.repeat(1001)}"/></testsuite>`),
      /longer than 1000/,
    );
  });

  it('refuses a root that is not a test suite', () => {
    expectInvalid(() => parse('<report><testcase name="x"/></report>'), /root element/);
  });
});

describe('parseReport: hostile and malformed XML', () => {
  it('refuses a billion-laughs DTD outright, before expanding anything', () => {
    let xml = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">';
    for (let i = 1; i <= 9; i++) {
      xml += `<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`;
    }
    xml += ']><testsuite><testcase name="&lol9;"/></testsuite>';
    const started = performance.now();
    expectInvalid(() => parse(xml), /<!DOCTYPE is not allowed/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses an XXE attempt and leaves unknown references unexpanded', () => {
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="&xxe;"/></testsuite>`;
    expectInvalid(() => parse(xxe), /<!DOCTYPE is not allowed/);
    // Without a DTD the reference is just text: nothing is read from anywhere.
    expect([...parse('<testsuite><testcase name="&xxe;"/></testsuite>').keys()]).toEqual(['&xxe;']);
  });

  it('refuses any declaration: a bare <!ENTITY, lowercase doctype, one after a comment', () => {
    expectInvalid(() => parse('<!ENTITY a "b"><testsuite/>'), /<!ENTITY is not allowed/);
    expectInvalid(() => parse('<!doctype testsuite><testsuite/>'), /<!doctype is not allowed/);
    expectInvalid(
      () => parse('<?xml version="1.0"?><!-- hi --><!DOCTYPE testsuite><testsuite/>'),
      /<!DOCTYPE is not allowed/,
    );
    expectInvalid(
      () => parse('<testsuite><!ELEMENT x ANY><testcase name="a"/></testsuite>'),
      /<!ELEMENT is not allowed/,
    );
  });

  it('refuses nesting deeper than the limit, before building a tree', () => {
    const nest = (depth: number): string =>
      '<testsuite>'.repeat(depth) + '<testcase name="x"/>' + '</testsuite>'.repeat(depth);
    expect(parse(nest(5), { maxDepth: 5 })).toEqual(new Map([['x', 'passed']]));
    expectInvalid(() => parse(nest(6), { maxDepth: 5 }), /nesting deeper than 5/);
    expectInvalid(() => parse(nest(DEFAULT_REPORT_LIMITS.maxDepth + 1)), /nesting deeper than 64/);
    // Millions of unclosed elements are refused without a stack overflow.
    expectInvalid(() => parse('<testsuite>' + '<a>'.repeat(2_000_000)), /nesting deeper/);
  });

  it('refuses more testcases than the limit, before building a tree', () => {
    const cases = '<testcase name="a"/>'.repeat(4);
    expectInvalid(
      () => parse(`<testsuite>${cases}</testsuite>`, { maxTests: 3 }),
      /more than 3 tests/,
    );
    expect(parse(`<testsuite>${cases}</testsuite>`, { maxTests: 4 }).size).toBe(1);
  });

  it('refuses malformed XML with a short reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['<testsuite><testcase name="x"></testsuite>', /Expected closing tag 'testcase'/],
      ['<testsuite><testcase name="x"/>', /malformed XML/],
      ['<testsuite><testcase name=x/></testsuite>', /malformed XML/],
      ['<testsuite><testcase name="x"', /unterminated start tag/],
      ['<testsuite><!-- never closed </testsuite>', /unterminated comment/],
      ['<testsuite><![CDATA[ never closed </testsuite>', /unterminated CDATA/],
      ['<testsuite/><testsuite/>', /more than one root/],
      ['<testsuite></testsuite><testsuite></testsuite>', /more than one root/],
      ['<testsuite></testsuite></testsuite>', /malformed XML/],
      ['<testsuite/>trailing', /text outside the root/],
      ['<?xml version="1.0"?>junk<testsuite/>', /text outside the root/],
      ['<testsuite></testsuites>', /malformed XML/],
    ];
    for (const [xml, pattern] of cases) expectInvalid(() => parse(xml), pattern);
  });

  it('never quotes more than 200 characters of the input', () => {
    const longName = 'n'.repeat(100_000);
    const error = expectInvalid(
      () => parse(`<testsuite><${longName}></testsuite>`),
      /malformed XML/,
    );
    expect(error.message.length).toBeLessThan(400);
  });
});

describe('parseReport: size, encoding and format', () => {
  it('refuses a report over maxBytes before looking at its content', () => {
    // Over the limit and also full of DTD and garbage: the size is what is reported.
    const text = '<!DOCTYPE x [<!ENTITY a "b">]>' + '\0'.repeat(100);
    expectInvalid(() => parse(text, { maxBytes: 64 }), /over the limit of 64/);
    expect(parse(json([]), { maxBytes: bytes(json([])).byteLength }).size).toBe(0);
  });

  it('refuses a report over the default 16 MiB quickly', () => {
    const huge = new Uint8Array(DEFAULT_REPORT_LIMITS.maxBytes + 1).fill(0x3c);
    const started = performance.now();
    expectInvalid(() => parseReport(huge), /over the limit of 16777216/);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('refuses content that is neither JSON nor XML, and empty reports', () => {
    expectInvalid(() => parse('PASSED 3 tests'), /expected JSON .* found byte 0x50/);
    expectInvalid(() => parse(''), /empty/);
    expectInvalid(() => parse(' \n\t '), /empty/);
    expectInvalid(() => parse('[{"id":"x"}]'), /found byte 0x5b/);
  });

  it('refuses invalid UTF-8', () => {
    const bad = new Uint8Array([...bytes('{"schema":1,"tests":[{"id":"'), 0xff, ...bytes('"}]}')]);
    expectInvalid(() => parseReport(bad), /not valid UTF-8/);
  });

  it('uses the default for a limit passed as undefined', () => {
    expect(parse('<testsuite/>', { maxBytes: undefined, maxDepth: undefined }).size).toBe(0);
  });

  it('refuses nonsensical limits as a harness bug, not a bad report', () => {
    for (const limits of [{ maxBytes: 0 }, { maxDepth: 1.5 }, { maxTests: -1 }]) {
      let caught: unknown;
      try {
        parse('<testsuite/>', limits);
      } catch (error) {
        caught = error;
      }
      expect(isProctorError(caught, 'INTERNAL'), String(caught)).toBe(true);
    }
  });
});

describe('printable and excerpt: what a test process wrote, shown', () => {
  it('drops terminal colour sequences and writes other control characters as \\xNN', () => {
    // What mocha printed for a gzip body compared with a string, coloured.
    const raw =
      '\u001b[31m+ actual\u001b[0m \u001f\u008b\b\u0000+.)\u0002\u0000\u001b]0;title\u0007 é\ttab';
    expect(printable(raw)).toBe(
      '+ actual \\x1f\\x8b\\x08\\x00+.)\\x02\\x00\\x1b]0;title\\x07 é\ttab',
    );
    expect(printable('line one\nline two')).toBe('line one\nline two');
    // An excerpt is one line: newlines, carriage returns and tabs become a space first.
    expect(excerpt('a\r\nb\u001b[1mc\u0000')).toBe('a bc\\x00');
  });
});
