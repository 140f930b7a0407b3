// Maps rows of the jobs and batches tables to the JobStore's types.
import type { BatchRow, JobRow } from '../schema.js';
import type { Batch, Job } from '../store.js';

function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

export function toJob(row: JobRow): Job {
  return { ...row, payload: parseJson(row.payload), result: parseJson(row.result) };
}

export function toBatch(row: BatchRow): Batch {
  return {
    id: row.id,
    idempotencyKey: row.idempotencyKey,
    label: row.label,
    total: row.total,
    createdAt: row.createdAt,
  };
}
