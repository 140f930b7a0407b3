import { describe, expect, it } from 'vitest';
import { createScrubber, scrubText } from '../../src/proxy/scrub.js';

const KEY = 'sk-secret-0123456789';

function through(chunks: string[], secrets = [KEY]) {
  const scrubber = createScrubber(secrets);
  const sent = chunks.map((c) => scrubber.push(Buffer.from(c)).toString());
  return { sent, all: sent.join('') + scrubber.end().toString() };
}

describe('the stream scrubber', () => {
  it('masks a key split across chunks, at any split point', () => {
    const text = `data: {"error": "bad key ${KEY}"}\n\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const { all } = through([text.slice(0, cut), text.slice(cut)]);
      expect(all).toBe('data: {"error": "bad key [REDACTED]"}\n\n');
    }
    const { all } = through(text.split(''));
    expect(all).not.toContain(KEY);
  });

  it('holds nothing back of a chunk that ends a line, so SSE events go out at once', () => {
    const { sent } = through(['data: {"a": 1}\n\n', 'data: {"b": 2}\n\n']);
    expect(sent).toEqual(['data: {"a": 1}\n\n', 'data: {"b": 2}\n\n']);
  });

  it('holds back at most the key length minus one of a line in progress', () => {
    const { sent, all } = through(['x'.repeat(100)]);
    expect(sent[0]).toBe('x'.repeat(100 - (KEY.length - 1)));
    expect(all).toBe('x'.repeat(100));
  });

  it('passes bytes untouched when there is no secret, and masks text', () => {
    expect(through(['abc'], []).sent).toEqual(['abc']);
    expect(scrubText(`a ${KEY} b ${KEY}`, [KEY, ''])).toBe('a [REDACTED] b [REDACTED]');
  });
});
