// The jest and vitest runners' reading of a phase's request (src/runners/core/js.py,
// read_js_request and with_canaries): the canaries' ids Proctor placed are a list of strings
// without newlines, run and reported as listed tests after the list's own. The runners' own
// Python functions, run on the host's python3: pure logic, no framework runs.
import { describe, expect, it } from 'vitest';
import { inRunner } from '../helpers/js-runner-python.js';

const REQUEST = { file: 'abcd', sentinels: [{ name: 'pone', expect: 'passed' }] };

describe("the JavaScript runners' request", () => {
  it.each(['jest', 'vitest'] as const)(
    '%s: runs the canaries as listed tests, after the listed ones, once each',
    async (name) => {
      const out = await inRunner(
        name,
        'request = runner.read_js_request(sys.stdin)\nprint(json.dumps(runner.with_canaries(["a", "b"], request)))\nprint(json.dumps(runner.with_canaries(["a"], None)))',
        `${JSON.stringify({ ...REQUEST, canaries: ['a again', 'b', 'a again'] })}\n`,
      );
      expect(out.split('\n')).toEqual(['["a", "b", "a again"]', '["a"]']);
    },
  );

  it.each([
    ['not a list', 'a again'],
    ['a number among them', ['a again', 1]],
    ['a newline in one', ['a\nagain']],
    ['a carriage return in one', ['a\ragain']],
    ['an empty one', ['']],
  ])('refuses canaries that are %s, with a clear error', async (_, canaries) => {
    for (const name of ['jest', 'vitest'] as const) {
      expect(
        await inRunner(
          name,
          'runner.read_js_request(sys.stdin)\nprint("read")',
          `${JSON.stringify({ ...REQUEST, canaries })}\n`,
        ),
      ).toBe('ValueError: bad canary ids');
    }
  });

  it('takes a request without canaries', async () => {
    expect(
      await inRunner(
        'jest',
        'print(json.dumps(runner.with_canaries(["a"], runner.read_js_request(sys.stdin))))',
        `${JSON.stringify(REQUEST)}\n`,
      ),
    ).toBe('["a"]');
  });
});
