// The jsonl chunks of `proctor report`: one line per row, equal to JSON.stringify of its flat
// row, however its strings read.
import { describe, expect, it } from 'vitest';
import { flatRow, jsonlChunks, type ReportRow } from '../../src/results/index.js';
import { reportRow } from '../helpers/results.js';

function row(task: string, model: string | null): ReportRow {
  return reportRow({ task, jobIds: [1, 2], phaseMs: { batch: 1, hidden: 2 }, model });
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
