// SWE-bench rows as a parquet file laid out as Hugging Face publishes them (every column a
// string, the ID lists JSON-encoded in strings, snappy pages), or with the ID lists as
// list<string> columns, as some derivatives write them; written with hyparquet-writer.
import { writeFileSync } from 'node:fs';
import { parquetWriteBuffer } from 'hyparquet-writer';

type Row = Record<string, unknown>;

const STRING = { type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' } as const;

export function writeRowsParquet(
  path: string,
  rows: Row[],
  options: { listColumns?: string[] } = {},
): void {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const lists = new Set(options.listColumns ?? []);
  const schema: Array<Record<string, unknown>> = [{ name: 'root', num_children: names.length }];
  for (const name of names) {
    if (lists.has(name)) {
      schema.push(
        { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', ...STRING },
      );
    } else schema.push({ name, ...STRING });
  }
  const columnData = names.map((name) => ({
    name,
    data: rows.map((r) => {
      const value = r[name];
      if (value === undefined || value === null) return null;
      if (lists.has(name))
        return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
      return typeof value === 'string' ? value : JSON.stringify(value);
    }),
  }));
  // The writer's types do not spell out nested schema elements; the file's reader checks them.
  const buffer = parquetWriteBuffer({ columnData, schema } as unknown as Parameters<
    typeof parquetWriteBuffer
  >[0]);
  writeFileSync(path, Buffer.from(buffer));
}
