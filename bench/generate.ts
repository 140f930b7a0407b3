// Deterministic content for the benches that generate a repository (bench:derive,
// bench:workspace): a seeded mulberry32 generator, so every run builds the same files.

export interface Generator {
  /** A number in [0, 1). */
  random: () => number;
  /** A Python module of about `bytes` bytes of small functions. */
  module: (bytes: number) => string;
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'total', 'count', 'value', 'item', 'key'];

export function createGenerator(initialSeed: number): Generator {
  let seed = initialSeed;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const word = () => `${WORDS[Math.floor(random() * WORDS.length)]}${Math.floor(random() * 1000)}`;
  const module = (bytes: number) => {
    const parts = ['"""Generated module."""\n'];
    let size = parts[0]?.length ?? 0;
    while (size < bytes) {
      const fn = `\n\ndef ${word()}_${word()}(${word()}, ${word()}):\n    return ${Math.floor(random() * 1e6)}\n`;
      parts.push(fn);
      size += fn.length;
    }
    return parts.join('');
  };
  return { random, module };
}
