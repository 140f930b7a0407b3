// Constant-space capture of a container's output. An OutputBuffer keeps the first half of its
// byte limit as the head and the last half in a ring buffer as the tail, and only counts what
// lies between: output is bounded while it is captured, never written somewhere unbounded and
// truncated afterwards, so a command printing gigabytes costs the driver at most `limitBytes`
// per stream. A Demuxer splits Docker's multiplexed stdout/stderr stream into two of them.
import { ProctorError } from '../errors.js';

export interface OutputBuffer {
  /** The limit it was made with: at most this many bytes are kept. */
  readonly limitBytes: number;
  /** Every byte written, kept or not. */
  readonly totalBytes: number;
  /** True once more than `limitBytes` bytes were written (some were dropped). */
  readonly truncated: boolean;
  write(chunk: Uint8Array): void;
  /** Head, then `\n…[N bytes omitted]…\n` if anything was dropped, then tail; UTF-8 with U+FFFD for bad bytes. */
  text(): string;
  toString(): string;
}

// Small outputs are the common case; the head grows from here instead of allocating the full
// limit for every `echo`.
const INITIAL_HEAD_BYTES = 4096;

export function omittedMarker(bytes: number): string {
  return `\n…[${bytes} bytes omitted]…\n`;
}

export function createOutputBuffer(limitBytes: number): OutputBuffer {
  if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `Expected \`limitBytes\` to be an integer >= 0, got \`${String(limitBytes)}\``,
    );
  }
  const headCap = Math.floor(limitBytes / 2);
  const tailCap = limitBytes - headCap;
  let head = Buffer.alloc(0);
  let headLen = 0;
  let ring: Buffer | undefined; // allocated on the first byte past the head
  let ringStart = 0; // index of the oldest byte
  let ringLen = 0;
  let total = 0;

  function appendHead(bytes: Uint8Array): void {
    if (headLen + bytes.length > head.length) {
      let size = Math.max(head.length, Math.min(INITIAL_HEAD_BYTES, headCap));
      while (size < headLen + bytes.length) size = Math.min(size * 2, headCap);
      const grown = Buffer.alloc(size);
      head.copy(grown, 0, 0, headLen);
      head = grown;
    }
    head.set(bytes, headLen);
    headLen += bytes.length;
  }

  function appendTail(bytes: Uint8Array): void {
    if (tailCap === 0) return;
    ring ??= Buffer.alloc(tailCap);
    // A chunk at least as long as the ring replaces all of it.
    if (bytes.length >= tailCap) {
      ring.set(bytes.subarray(bytes.length - tailCap));
      ringStart = 0;
      ringLen = tailCap;
      return;
    }
    const writeAt = (ringStart + ringLen) % tailCap;
    const first = Math.min(bytes.length, tailCap - writeAt);
    ring.set(bytes.subarray(0, first), writeAt);
    ring.set(bytes.subarray(first), 0);
    const overflow = ringLen + bytes.length - tailCap;
    if (overflow > 0) {
      ringStart = (ringStart + overflow) % tailCap;
      ringLen = tailCap;
    } else {
      ringLen += bytes.length;
    }
  }

  function tailBytes(): Buffer {
    if (ring === undefined || ringLen === 0) return Buffer.alloc(0);
    const end = ringStart + ringLen;
    if (end <= tailCap) return ring.subarray(ringStart, end);
    return Buffer.concat([ring.subarray(ringStart), ring.subarray(0, end - tailCap)]);
  }

  function text(): string {
    const headPart = head.subarray(0, headLen);
    const tailPart = tailBytes();
    const omitted = total - headLen - ringLen;
    // Nothing dropped: head and tail are contiguous, so decode them as one.
    if (omitted === 0) return Buffer.concat([headPart, tailPart]).toString('utf8');
    // Move the cut points to character boundaries so that the marker, not a U+FFFD, stands
    // for a character split by the cut; its bytes are counted as omitted.
    const headEnd = completeUtf8Length(headPart);
    const tailStart = leadingContinuationBytes(tailPart);
    const dropped = omitted + (headPart.length - headEnd) + tailStart;
    return (
      headPart.subarray(0, headEnd).toString('utf8') +
      omittedMarker(dropped) +
      tailPart.subarray(tailStart).toString('utf8')
    );
  }

  return {
    limitBytes,
    get totalBytes() {
      return total;
    },
    get truncated() {
      return total > limitBytes;
    },
    write(chunk: Uint8Array): void {
      total += chunk.length;
      const toHead = Math.min(chunk.length, headCap - headLen);
      if (toHead > 0) appendHead(chunk.subarray(0, toHead));
      if (toHead < chunk.length) appendTail(chunk.subarray(toHead));
    },
    text,
    toString: text,
  };
}

/** The length of `bytes` without a trailing, incomplete UTF-8 sequence (invalid bytes are kept). */
function completeUtf8Length(bytes: Uint8Array): number {
  // A sequence is at most 4 bytes, so only the last 3 can start an incomplete one.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** How many continuation bytes (at most 3) start `bytes`: the rest of a character cut in two. */
function leadingContinuationBytes(bytes: Uint8Array): number {
  let count = 0;
  while (count < 3 && count < bytes.length && ((bytes[count] ?? 0) & 0xc0) === 0x80) count++;
  return count;
}

export interface Demuxer {
  /** Feeds one chunk of the raw stream; returns how many payload bytes it held. */
  write(chunk: Buffer): number;
}

/**
 * Docker's stream for an exec without a TTY is a series of frames: an 8-byte header (stream
 * type: 1 stdout, 2 stderr, 3 an engine error; 3 zero bytes; big-endian payload length), then
 * the payload. Not docker-modem's demuxStream: that one holds each frame whole and copies its
 * pending bytes on every frame (`Buffer.concat`, `Buffer.from`), which for 2 GB of output raised
 * peak RSS by 56-84 MiB instead of ~40 and halved the throughput. This one passes slices of
 * the chunks straight on, and keeps nothing but a partial header.
 */
export function createDemuxer(stdout: OutputBuffer, stderr: OutputBuffer): Demuxer {
  const header = Buffer.alloc(8);
  let headerBytes = 0;
  let payloadLeft = 0;
  let target = stdout;
  return {
    write(chunk: Buffer): number {
      let payload = 0;
      for (let at = 0; at < chunk.length;) {
        const n = Math.min(payloadLeft || 8 - headerBytes, chunk.length - at);
        if (payloadLeft > 0) {
          target.write(chunk.subarray(at, at + n));
          payloadLeft -= n;
          payload += n;
        } else {
          chunk.copy(header, headerBytes, at, at + n);
          headerBytes += n;
          if (headerBytes === 8) {
            target = header[0] === 1 ? stdout : stderr;
            payloadLeft = header.readUInt32BE(4);
            headerBytes = 0;
          }
        }
        at += n;
      }
      return payload;
    },
  };
}
