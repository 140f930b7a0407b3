// The constant-space head/tail capture behind every container read: what it keeps, what it
// counts, how it decodes a cut that falls inside a UTF-8 character, and how Docker's
// multiplexed stream is split into stdout and stderr however its frames are chunked.
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import {
  createDemuxer,
  createOutputBuffer,
  omittedMarker,
} from '../../src/sandbox/output-buffer.js';

/** What the buffer must show for `all` written in any chunking: head, marker, tail. */
function expected(all: Buffer, limit: number): string {
  if (all.length <= limit) return all.toString('utf8');
  const head = Math.floor(limit / 2);
  const tail = limit - head;
  return (
    all.subarray(0, head).toString('utf8') +
    omittedMarker(all.length - limit) +
    all.subarray(all.length - tail).toString('utf8')
  );
}

function ascii(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = 97 + ((i * 7 + seed) % 26);
  return bytes;
}

describe('createOutputBuffer', () => {
  it('keeps output within the limit whole, with no marker', () => {
    const buffer = createOutputBuffer(10);
    buffer.write(Buffer.from('hello '));
    buffer.write(Buffer.from('you!'));
    expect(buffer.text()).toBe('hello you!');
    expect(buffer.totalBytes).toBe(10);
    expect(buffer.truncated).toBe(false);
    expect(String(buffer)).toBe('hello you!');
  });

  it('keeps the first and last halves of longer output and counts what it dropped', () => {
    const buffer = createOutputBuffer(8);
    buffer.write(Buffer.from('0123456789abcdefghij'));
    expect(buffer.text()).toBe(`0123${omittedMarker(12)}ghij`);
    expect(buffer.totalBytes).toBe(20);
    expect(buffer.truncated).toBe(true);
  });

  it('gives the same text however the output is split into chunks', () => {
    for (const limit of [0, 1, 7, 64, 101]) {
      for (let seed = 0; seed < 20; seed++) {
        const all = ascii(seed * 17, seed);
        const buffer = createOutputBuffer(limit);
        let at = 0;
        for (let size = 1; at < all.length; size = (size * 5 + seed) % 53) {
          buffer.write(all.subarray(at, at + size));
          at += size;
        }
        expect(buffer.text(), `limit ${limit}, seed ${seed}`).toBe(expected(all, limit));
        expect(buffer.totalBytes).toBe(all.length);
      }
    }
  });

  it('keeps only the end of a single chunk longer than the tail', () => {
    const buffer = createOutputBuffer(6);
    buffer.write(Buffer.from('ab'));
    buffer.write(Buffer.from('cdefghijklmnop'));
    buffer.write(Buffer.from('q'));
    expect(buffer.text()).toBe(`abc${omittedMarker(11)}opq`);
  });

  it('moves a cut inside a multibyte character to the marker instead of garbling it', () => {
    // 'a€b' is 5 bytes ('€' is 3); with a limit of 6 the head (3 bytes) ends inside the first
    // '€' and the tail (3 bytes) starts inside the last one.
    const buffer = createOutputBuffer(6);
    buffer.write(Buffer.from('a€b'.repeat(4)));
    expect(buffer.text()).toBe(`a${omittedMarker(18)}b`);
    expect(buffer.text()).not.toContain('\ufffd');
  });

  it('decodes invalid UTF-8 with replacement characters instead of throwing', () => {
    const buffer = createOutputBuffer(4);
    buffer.write(Buffer.from([0xff, 0xfe, 0x41, 0xc3, 0x28, 0xe2, 0x82]));
    expect(() => buffer.text()).not.toThrow();
    expect(buffer.text()).toContain('\ufffd');
    expect(buffer.totalBytes).toBe(7);
  });

  it('rejects a limit that is not a whole number of bytes', () => {
    for (const limit of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      let thrown: unknown;
      try {
        createOutputBuffer(limit);
      } catch (error) {
        thrown = error;
      }
      expect(isProctorError(thrown, 'SANDBOX_INVALID'), String(limit)).toBe(true);
    }
  });
});

function frame(type: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('createDemuxer', () => {
  const stream = Buffer.concat([
    frame(1, 'out one\n'),
    frame(2, 'err one\n'),
    frame(1, ''),
    frame(1, 'out two, a longer line\n'),
    frame(3, 'engine error\n'),
  ]);

  it('splits frames into stdout and stderr however the stream is chunked', () => {
    for (const size of [1, 2, 3, 7, 8, 9, 13, stream.length]) {
      const stdout = createOutputBuffer(1000);
      const stderr = createOutputBuffer(1000);
      const demuxer = createDemuxer(stdout, stderr);
      let payload = 0;
      for (let at = 0; at < stream.length; at += size) {
        payload += demuxer.write(stream.subarray(at, at + size));
      }
      expect(stdout.text(), `chunks of ${size}`).toBe('out one\nout two, a longer line\n');
      expect(stderr.text(), `chunks of ${size}`).toBe('err one\nengine error\n');
      expect(payload).toBe(stdout.totalBytes + stderr.totalBytes);
    }
  });

  it('bounds what it keeps from a frame longer than the limit', () => {
    const stdout = createOutputBuffer(4);
    const stderr = createOutputBuffer(4);
    createDemuxer(stdout, stderr).write(frame(1, 'abcdefgh'));
    expect(stdout.text()).toBe(`ab${omittedMarker(4)}gh`);
    expect(stderr.totalBytes).toBe(0);
  });
});
