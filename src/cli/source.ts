// [source] as a job's result keeps it (the workers' taskRecord: task.toml's keys, in its
// order, hints_text left out), read back for `proctor status`. Results come from the database,
// so they are checked here, not trusted; this module stays apart from the oracle so that
// `status` loads none of it.
import { z } from 'zod';

const storedSource = z.record(z.string().max(100), z.string().max(1000));

export type StoredSource = z.output<typeof storedSource>;

/** The [source] of a stored job result, or undefined when it has none (or a malformed one). */
export function sourceOfResult(result: unknown): StoredSource | undefined {
  const task = (result as { task?: { source?: unknown } } | null)?.task;
  if (task?.source === undefined) return undefined;
  const parsed = storedSource.safeParse(task.source);
  return parsed.success ? parsed.data : undefined;
}

/** `key value` pairs joined by commas, as the oracle log writes them; undefined when empty. */
export function sourceText(source: StoredSource | undefined): string | undefined {
  if (source === undefined) return undefined;
  const parts = Object.entries(source).map(([key, value]) => `${key} ${value}`);
  return parts.length === 0 ? undefined : parts.join(', ');
}
