// The jsonl chunks of `proctor report`: one line per row, equal to JSON.stringify of its flat
// row, however its strings read.
import { describe, expect, it } from 'vitest';
import { flatRow, jsonlChunks, type ReportRow } from '../../src/results/index.js';

function row(task: string, model: string | null): ReportRow {
  return {
    batch: 'b',
    task,
    instanceId: null,
    attempt: 1,
    jobIds: [1, 2],
    supersededJobIds: [],
    status: 'done',
    class: 'resolved',
    verdict: 'PASS',
    reason: 'PASS',
    errorCode: null,
    testsHash: null,
    image: null,
    candidateSha256: null,
    tokens: null,
    costUsd: null,
    turns: null,
    toolCalls: null,
    solveMs: null,
    phaseMs: { batch: 1, hidden: 2 },
    jobMs: null,
    startedAt: null,
    finishedAt: null,
    model,
    bundle: null,
    detail: null,
  };
}

describe('jsonlChunks', () => {
  it('gives one line per row in chunks of 1,000, even when a string holds a row boundary', () => {
    const rows = Array.from({ length: 2_345 }, (_, i) =>
      row(`t${i}},{"batch":"x\n`, i % 2 === 0 ? '},{"batch":' : null),
    );
    const chunks = [...jsonlChunks(rows)];
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => c.endsWith('\n'))).toBe(true);
    const lines = chunks.join('').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual(rows.map((r) => JSON.stringify(flatRow(r))));
  });

  it('gives nothing for no rows', () => {
    expect([...jsonlChunks([])]).toEqual([]);
  });
});
