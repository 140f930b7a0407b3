// Masking the real key in what goes back to the sandbox. A provider can echo the key it was
// sent (an error that quotes the credential, a misconfigured gateway), and nothing the
// provider says may carry it into the container. Bodies pass through a scrubber that works on
// a stream: a key split across two chunks is still found, because the scrubber holds back the
// bytes that could be the start of one. It holds back as little as it can, so that streaming
// keeps its latency: a key has no line break, so everything up to the last line break of what
// has arrived can go at once (an SSE event always ends with one), and otherwise all but the
// last key-length-minus-one bytes.
import { REDACTED } from '../store/redact.js';

export interface Scrubber {
  /** The bytes of `chunk` that are safe to send now, with every secret masked. */
  push(chunk: Buffer): Buffer;
  /** What was held back, masked: call once at the end. */
  end(): Buffer;
}

const MASK = Buffer.from(REDACTED);

function mask(buffer: Buffer, secrets: readonly Buffer[]): Buffer {
  let out = buffer;
  for (const secret of secrets) {
    if (out.indexOf(secret) === -1) continue;
    const parts: Buffer[] = [];
    let start = 0;
    for (let at = out.indexOf(secret); at !== -1; at = out.indexOf(secret, start)) {
      parts.push(out.subarray(start, at), MASK);
      start = at + secret.length;
    }
    parts.push(out.subarray(start));
    out = Buffer.concat(parts);
  }
  return out;
}

/** A scrubber for `secrets` (empty strings ignored). */
export function createScrubber(secrets: readonly string[]): Scrubber {
  const keys = secrets.filter((s) => s !== '').map((s) => Buffer.from(s));
  const longest = Math.max(0, ...keys.map((k) => k.length));
  let held: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      if (keys.length === 0) return chunk;
      const buffer = mask(held.length === 0 ? chunk : Buffer.concat([held, chunk]), keys);
      const lastBreak = buffer.lastIndexOf(0x0a);
      const cut = Math.max(lastBreak + 1, buffer.length - (longest - 1));
      held = buffer.subarray(cut);
      return buffer.subarray(0, cut);
    },
    end() {
      const rest = mask(held, keys);
      held = Buffer.alloc(0);
      return rest;
    },
  };
}

/** `text` with every secret masked. */
export function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join(REDACTED);
  return out;
}
