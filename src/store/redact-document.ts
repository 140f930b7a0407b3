// Redaction of a whole document by its media type (an artifact's content): which types are
// text, and JSON redacted by structure rather than as text.
import type { Redactor } from './redact.js';

/** Text media types, whose content is redacted by default. */
export function isTextMediaType(mediaType: string): boolean {
  const type = mediaType.split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    /^application\/(?:json|x-ndjson|(?:x-)?jsonl(?:ines)?|xml|(?:x-)?yaml|toml|javascript|x-sh|x-diff|x-patch|sql)$/.test(
      type,
    )
  );
}

function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function isJsonLinesMediaType(type: string): boolean {
  return /^application\/(?:x-ndjson|(?:x-)?jsonl(?:ines)?)$/.test(type);
}

/**
 * Redacts a whole document of a media type (an artifact's content). JSON goes through value()
 * (sensitive keys at any depth, which text() alone cannot see under a nested object), one
 * document or one per line for JSON Lines, re-serialised (2-space indent if the input was
 * indented); anything that does not parse goes through text(). Invalid UTF-8 becomes U+FFFD:
 * redaction needs text, and an unredacted text file is worse.
 */
export function redactDocument(
  redactor: Redactor,
  mediaType: string,
  content: Buffer | string,
): string {
  const text = typeof content === 'string' ? content : content.toString('utf8');
  const type = mediaType.split(';')[0]?.trim().toLowerCase() ?? '';
  const json = (s: string, indent?: number): string => {
    try {
      return JSON.stringify(redactor.value(JSON.parse(s) as unknown), null, indent);
    } catch {
      return redactor.text(s);
    }
  };
  if (isJsonMediaType(type)) {
    const trailing = /\r?\n$/.exec(text)?.[0] ?? '';
    return json(text, /\n[ \t]/.test(text) ? 2 : undefined) + trailing;
  }
  if (isJsonLinesMediaType(type)) {
    const lines = text.split('\n').map((line) => (line.trim() === '' ? line : json(line)));
    return lines.join('\n');
  }
  return redactor.text(text);
}
