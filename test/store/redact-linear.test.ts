// Redaction runs over whatever a hostile repository makes its tests print (64 KiB or more per
// phase in an oracle log) and over every message the API returns, so no input may make it
// stall. Each case builds a hostile input for one masking rule at 64 KiB and at 256 KiB and
// checks that redacting the larger takes roughly four times as long, not sixteen: a bound
// against catastrophic backtracking, not a benchmark. Each case also checks that a real
// credential after the hostile text is still masked.
import { describe, expect, it } from 'vitest';
import { createRedactor, isSensitiveKey, REDACTED } from '../../src/store/index.js';

const KIB = 1024;
// Generous: linear redaction of 256 KiB takes a few tens of milliseconds of CPU time.
const BOUND_MS = 1_000;
// Timer and garbage-collector noise.
const SLACK_MS = 40;

const redactor = createRedactor({
  home: '/home/alice',
  secrets: ['canary-7f3a9c2e1b-provider-key'],
});

/** `unit` repeated between `head` and `tail`, `n` characters in all. */
function fill(n: number, unit: string, head = '', tail = ''): string {
  const body = n - head.length - tail.length;
  return head + unit.repeat(Math.ceil(body / unit.length)).slice(0, body) + tail;
}

const HOSTILE: Record<string, (n: number) => string> = {
  // Sensitive key assignments, without quotes.
  'token: with an ordinary-looking value': (n) => fill(n, 'Aa-', 'token: '),
  'token: with an ordinary-looking value that is not one': (n) => fill(n, 'Aa-', 'token: ', '1'),
  'password: with a long value': (n) => fill(n, 'x', 'password: '),
  'password: with a long word ending in a digit': (n) => fill(n, 'x', 'password: ', '1'),
  'runs of a:': (n) => fill(n, 'a:'),
  'runs of a=': (n) => fill(n, 'a='),
  'runs of -a=': (n) => fill(n, '-a='),
  'runs of --a=': (n) => fill(n, '--a='),
  'runs of token=': (n) => fill(n, 'token='),
  'runs of token={': (n) => fill(n, 'token={'),
  'runs of token:': (n) => fill(n, 'token: '),
  'runs of --token': (n) => fill(n, '--token '),
  'runs of =': (n) => fill(n, '='),
  'runs of -': (n) => fill(n, '-'),
  'runs of spaces after a key': (n) => fill(n, ' ', 'password', 'x'),
  'runs of spaces after a colon': (n) => fill(n, ' ', 'token:'),
  'runs of token: Token': (n) => fill(n, 'token: Token '),
  'a long key': (n) => fill(n, 'a', '', '=x'),
  // With quotes.
  'runs of "': (n) => fill(n, '"'),
  "runs of '": (n) => fill(n, "'"),
  'runs of token="': (n) => fill(n, 'token="'),
  'an unterminated quoted value': (n) => fill(n, 'a', 'token="'),
  'an unterminated quoted value with escapes': (n) => fill(n, '\\"', 'token="'),
  'runs of "token": "': (n) => fill(n, '"token": "'),
  // Bearer and basic.
  'runs of Bearer': (n) => fill(n, 'Bearer '),
  'Bearer and spaces': (n) => fill(n, ' ', 'Bearer'),
  'Bearer auth…': (n) => fill(n, 'h', 'Bearer aut', '-'),
  'Basic and a long base64 run': (n) => fill(n, 'A', 'Basic ', '_'),
  'runs of basic': (n) => fill(n, 'basic '),
  // URL credentials.
  'a long userinfo without @': (n) => fill(n, 'a', 'https://'),
  'a long userinfo of a:': (n) => fill(n, 'a:', 'https://'),
  'runs of a- (scheme characters)': (n) => fill(n, 'a-'),
  'runs of a. before :/': (n) => fill(n, 'a.', '', ':/'),
  'runs of a://': (n) => fill(n, 'a://'),
  'runs of @': (n) => fill(n, '@'),
  'runs of //': (n) => fill(n, '//'),
  // Key shapes.
  'runs of sk-': (n) => fill(n, 'sk-'),
  'a long sk- run ending in -': (n) => fill(n, 'a', 'sk-', '-'),
  'a long ghp_ run ending in _': (n) => fill(n, 'a', 'ghp_', '_'),
  'runs of JWT segments': (n) => fill(n, 'eyJaaaaaaaaa.'),
  'runs of xoxb-': (n) => fill(n, 'xoxb-'),
  // PEM private keys, the home path.
  'BEGIN without END': (n) => fill(n, '-----BEGIN PRIVATE KEY-----'),
  'END without a name': (n) => fill(n, 'PRIVATE ', '-----BEGIN PRIVATE KEY-----\n-----END '),
  'runs of the home path': (n) => fill(n, '/home/alice'),
  'runs of a near miss of a secret': (n) => fill(n, 'canary-7f3a9c2e1b-provider-ke'),
  'runs of AKIA': (n) => fill(n, 'AKIA'),
};

// After the hostile text, on its own line: what must still be masked.
const TAIL = '\npassword=hunter2 https://u:p@h/ Bearer abc';
const MASKED_TAIL = `\npassword=${REDACTED} https://${REDACTED}@h/ Bearer ${REDACTED}`;

/**
 * The least CPU time of three runs in milliseconds (CPU time, so that other processes on a
 * shared machine do not count), or of the first run if that already exceeds BOUND_MS.
 */
function cpuTime(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = process.cpuUsage();
    run();
    const { user, system } = process.cpuUsage(start);
    best = Math.min(best, (user + system) / 1000);
    if (best >= BOUND_MS) break; // failed already: no need to wait for more
  }
  return best;
}

function expectLinear(redact: (size: number) => () => unknown): void {
  const small = cpuTime(redact(64 * KIB));
  expect(small, '64 KiB').toBeLessThan(BOUND_MS);
  const large = cpuTime(redact(256 * KIB));
  expect(large, '256 KiB').toBeLessThan(BOUND_MS);
  expect(large, `256 KiB against ${small.toFixed(1)} ms for 64 KiB`).toBeLessThan(
    8 * small + SLACK_MS,
  );
}

describe('redaction time on hostile input', () => {
  it.each(Object.entries(HOSTILE))('grows linearly with the input: %s', (_, make) => {
    expectLinear((size) => {
      const input = make(size);
      expect(input).toHaveLength(size);
      return () => redactor.text(input);
    });
    expect(redactor.text(make(64 * KIB) + TAIL).endsWith(MASKED_TAIL)).toBe(true);
  });

  it('grows linearly with the length of an object key', () => {
    // Upper-case runs, words, and words that hold a sensitive part (the slower path).
    for (const unit of ['A', 'Aa', 'a_', 'aB', 'TOKEN', 'Pass', 'pass_', 'secretKey']) {
      expectLinear((size) => {
        const key = fill(size, unit);
        return () => redactor.value({ [key]: 'x' });
      });
    }
    expect(isSensitiveKey(`${fill(64 * KIB, 'A')}_TOKEN`)).toBe(true);
  });
});
