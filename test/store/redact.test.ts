import { describe, expect, it } from 'vitest';
import {
  createRedactor,
  isSensitiveKey,
  isTextMediaType,
  REDACTED,
  redactDocument,
} from '../../src/store/index.js';

const HOME = '/home/alice';
const OPENAI_KEY = 'sk-proj-Zq81bX0cLw3nR5tY7uV9aB2dE4fG6hJ';
const ENV_SECRET = 'canary-7f3a9c2e1b-not-a-known-shape';

const redactor = createRedactor({ home: HOME, secrets: [ENV_SECRET, 'short'] });

describe('isSensitiveKey', () => {
  it('recognises credential key names in any case convention', () => {
    for (const key of [
      'password',
      'PGPASSWORD',
      'db_pass',
      'MYSQL_PWD',
      'apiKey',
      'APIKey',
      'OPENAI_API_KEY',
      'x-api-key',
      'access_token',
      'x-auth-token',
      'Authorization',
      'auth',
      'oauth',
      'Cookie',
      'Set-Cookie',
      'sessionId',
      'session',
      'client_secret',
      'aws_secret_access_key',
      'private_key',
      'credentials',
    ]) {
      expect(isSensitiveKey(key), key).toBe(true);
    }
  });

  it('leaves grading and usage figures alone', () => {
    for (const key of [
      'passed',
      'pass_rate',
      'bypass',
      'author',
      'max_tokens',
      'inputTokens',
      'tokenizer',
      'session_count',
      'name',
      // Alone, a verb, a count or a shell command; `db_pass` above is a credential.
      'pass',
      'pwd',
      'passes',
      'tokens',
      'keys',
    ]) {
      expect(isSensitiveKey(key), key).toBe(false);
    }
  });
});

describe('redactor.text', () => {
  it('masks bearer values and basic credentials but not the word "basic" in prose', () => {
    expect(redactor.text('Authorization: Bearer abc.def-ghi')).toBe(
      'Authorization: Bearer [REDACTED]',
    );
    expect(redactor.text('curl -H "Authorization: Basic dXNlcjpwYXNz" x')).toBe(
      'curl -H "Authorization: Basic [REDACTED]" x',
    );
    expect(redactor.text('a basic usage example')).toBe('a basic usage example');
  });

  it('masks credentials in URLs, keeping scheme and host', () => {
    expect(redactor.text('git clone https://bob:pa55w0rd@github.com/a/b.git')).toBe(
      'git clone https://[REDACTED]@github.com/a/b.git',
    );
    expect(redactor.text('postgres://u:p@db:5432/x and mailto:bob@example.com')).toBe(
      'postgres://[REDACTED]@db:5432/x and mailto:bob@example.com',
    );
  });

  it('masks well-known key shapes', () => {
    const text = `keys: ${OPENAI_KEY} ghp_abcdefghijklmnopqrstuvwxyz0123456789 AKIAABCDEFGHIJKLMNOP`;
    expect(redactor.text(text)).toBe('keys: [REDACTED] [REDACTED] [REDACTED]');
    expect(redactor.text('sk-short and task-runner-with-a-long-name')).toBe(
      'sk-short and task-runner-with-a-long-name',
    );
  });

  it('masks exact secrets of 8 or more characters wherever they appear', () => {
    expect(redactor.text(`x${ENV_SECRET}y ${encodeURIComponent(ENV_SECRET)}`)).toBe(
      `x${REDACTED}y ${REDACTED}`,
    );
    expect(redactor.text('a short word')).toBe('a short word');
  });

  it('replaces the home path with ~ only where it is the whole path component', () => {
    expect(redactor.text(`${HOME}/proj/a.ts, ${HOME}, ${HOME}2/x, /mnt${HOME}/y`)).toBe(
      `~/proj/a.ts, ~, ${HOME}2/x, /mnt${HOME}/y`,
    );
  });

  it('masks sensitive KEY=value pairs, flags and JSON members in command lines and logs', () => {
    const command =
      'docker run -e OPENAI_API_KEY=abc123 --env=GITHUB_TOKEN=xyz -e LANG=C --password hunter2 --max-tokens 100 img';
    expect(redactor.text(command)).toBe(
      'docker run -e OPENAI_API_KEY=[REDACTED] --env=GITHUB_TOKEN=[REDACTED] -e LANG=C --password [REDACTED] --max-tokens 100 img',
    );
    expect(redactor.text('https://h/p?access_token=abc&page=2')).toBe(
      'https://h/p?access_token=[REDACTED]&page=2',
    );
    expect(redactor.text('{"password": "x", "pin_session": 7, "auth": true, "passed": 3}')).toBe(
      '{"password": "[REDACTED]", "pin_session": "[REDACTED]", "auth": true, "passed": 3}',
    );
    expect(redactor.text('export SECRET="a b c"; passed=3')).toBe(
      'export SECRET="[REDACTED]"; passed=3',
    );
  });

  it('masks PEM private keys', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----';
    expect(redactor.text(`key:\n${pem}\nend`)).toBe(`key:\n${REDACTED}\nend`);
  });

  it('is idempotent', () => {
    const inputs = [
      'Authorization: Bearer abc password="x" https://u:p@h/ token: abc',
      `${OPENAI_KEY} ${HOME}/x {"apiKey": 12}`,
    ];
    for (const input of inputs) {
      const once = redactor.text(input);
      expect(redactor.text(once)).toBe(once);
    }
  });
});

describe('redactor.value', () => {
  it('replaces values under sensitive keys at any depth and redacts every string', () => {
    const input = {
      solver: { model: 'gpt', apiKey: 'plain-looking', max_tokens: 2000 },
      headers: [{ Authorization: 'Bearer zzz' }, { 'x-trace': `Bearer ${OPENAI_KEY}` }],
      credentials: { user: 'bob', note: 'anything' },
      auth: false,
      token: null,
      cwd: `${HOME}/work`,
      [`${HOME}/file.ts`]: 'passed',
      counts: { passed: 3, failed: 1, inputTokens: 10 },
    };
    expect(redactor.value(input)).toEqual({
      solver: { model: 'gpt', apiKey: REDACTED, max_tokens: 2000 },
      headers: [{ Authorization: REDACTED }, { 'x-trace': 'Bearer [REDACTED]' }],
      credentials: REDACTED,
      auth: false,
      token: null,
      cwd: '~/work',
      '~/file.ts': 'passed',
      counts: { passed: 3, failed: 1, inputTokens: 10 },
    });
    expect(input.solver.apiKey).toBe('plain-looking');
  });

  it('cuts cycles and deep nesting without overflowing the stack', () => {
    const cyclic: Record<string, unknown> = { name: 'root' };
    cyclic['self'] = cyclic;
    cyclic['list'] = [1, cyclic];
    const shared = { k: 1 };
    cyclic['a'] = shared;
    cyclic['b'] = shared;
    expect(redactor.value(cyclic)).toEqual({
      name: 'root',
      self: '[Circular]',
      list: [1, '[Circular]'],
      a: { k: 1 },
      b: { k: 1 },
    });

    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = { next: deep };
    const copied = createRedactor({ maxDepth: 3 }).value(deep);
    expect(copied).toEqual({ next: { next: { next: '[Truncated]' } } });
    expect(() => redactor.value(deep)).not.toThrow();
  });

  it('turns buffers, class instances, dates and errors into short safe forms', () => {
    class Connection {
      password = 'x';
    }
    expect(
      redactor.value({
        buf: Buffer.from('secret bytes'),
        view: new Uint8Array(4),
        conn: new Connection(),
        map: new Map([['password', 'x']]),
        when: new Date(0),
        error: new Error(`failed in ${HOME}/x with Bearer abc`),
        fn: () => 1,
      }),
    ).toEqual({
      buf: '[Buffer 12 bytes]',
      view: '[Uint8Array 4 bytes]',
      conn: '[object Connection]',
      map: '[object Map]',
      when: '1970-01-01T00:00:00.000Z',
      error: { name: 'Error', message: 'failed in ~/x with Bearer [REDACTED]' },
      fn: '[Function]',
    });
  });
});

describe('redactDocument', () => {
  it('redacts JSON structurally, keeping its indentation, and falls back to text rules', () => {
    const doc = JSON.stringify(
      { db: { credentials: { user: 'u', pw: 'hunter2' } }, n: 1 },
      null,
      2,
    );
    expect(redactDocument(redactor, 'application/json', `${doc}\n`)).toBe(
      `${JSON.stringify({ db: { credentials: REDACTED }, n: 1 }, null, 2)}\n`,
    );
    expect(
      redactDocument(redactor, 'application/x-ndjson', '{"token":"a"}\nnot json token=b\n'),
    ).toBe('{"token":"[REDACTED]"}\nnot json token=[REDACTED]\n');
    expect(redactDocument(redactor, 'text/plain', `${HOME}/x`)).toBe('~/x');
  });

  it('treats text, JSON, XML, YAML and patches as text media types, not binaries', () => {
    for (const type of [
      'text/plain',
      'text/x-diff; charset=utf-8',
      'application/json',
      'application/vnd.x+json',
      'application/x-ndjson',
      'application/yaml',
    ]) {
      expect(isTextMediaType(type), type).toBe(true);
    }
    for (const type of ['application/octet-stream', 'image/png', 'application/gzip']) {
      expect(isTextMediaType(type), type).toBe(false);
    }
  });
});
