// How routes read a request: a zod schema over the query, path or body, with a failure as
// 400 PAYLOAD_INVALID naming the key at fault (`query.limit: …`, `body.jobs[2].kind: …`).
import type { Context } from 'hono';
import type { z } from 'zod';
import { ProctorError } from '../errors.js';
import { zodProblem } from '../problems.js';

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { path, detail } = zodProblem(result.error, where);
    throw new ProctorError('PAYLOAD_INVALID', `${path}: ${detail}`, { data: { path } });
  }
  return result.data;
}

/**
 * The query parameters, each given once: a repeated one is ambiguous, so it is refused,
 * except those named in `lists` (e.g. `batch` of `/api/report`), which come as arrays.
 */
export function queryOf(c: Context, lists: readonly string[] = []): Record<string, unknown> {
  const all = c.req.queries();
  const query: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(all)) {
    if (lists.includes(name)) {
      query[name] = values;
      continue;
    }
    if (values.length > 1) {
      throw new ProctorError('PAYLOAD_INVALID', `query.${name}: given ${values.length} times`, {
        data: { path: `query.${name}` },
      });
    }
    query[name] = values[0] ?? '';
  }
  return query;
}

export async function jsonOf(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ProctorError('PAYLOAD_INVALID', 'the body is not valid JSON');
  }
}
