// A batch's suite as stored (both stores): the task ids, distinct, as a JSON array, bounded
// (MAX_SUITE_TASKS ids of at most 200 characters) so that one row stays small.
import { ProctorError } from '../errors.js';

/** The most task ids a batch's suite may record. */
export const MAX_SUITE_TASKS = 100_000;

export function batchSuiteText(tasks: readonly string[]): string {
  if (tasks.length > MAX_SUITE_TASKS) {
    throw new ProctorError(
      'USAGE',
      `a batch's suite may name at most ${MAX_SUITE_TASKS} tasks, got ${tasks.length}`,
    );
  }
  for (const task of tasks) {
    if (typeof task !== 'string' || task.length === 0 || task.length > 200) {
      throw new ProctorError(
        'USAGE',
        `a suite task id must be 1 to 200 characters, got ${JSON.stringify(task)}`,
      );
    }
  }
  return JSON.stringify([...new Set(tasks)]);
}

export function parseBatchSuite(batchId: string, text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = null;
  }
  if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) {
    throw new ProctorError(
      'DB_UNREADABLE',
      `batch ${batchId}: its stored suite is not a list of task ids`,
    );
  }
  return value;
}
