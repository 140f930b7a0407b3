// Plain aligned columns for terminal output (no borders, so it pastes cleanly into notes), and
// the one way a verdict is worded on a line.

export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * A verdict (or validity) and its detail, with the reason code between them unless it only
 * repeats the verdict: `PASS: 2 existing tests…`, `FAIL HIDDEN_FAILED: …`, `PASS SOLVED: …`.
 */
export function verdictText(head: string, reason: string | undefined, detail: string | undefined) {
  const repeats = reason === undefined || reason === '' || reason === 'PASS' || reason === head;
  const words = repeats ? head : `${head} ${reason}`;
  return detail ? `${words}: ${detail}` : words;
}
