// Small git diffs written by hand for the oracle's pure tests.

/** A git diff adding `path` with `lines`. */
export function addFile(path: string, lines: readonly string[]): string {
  return [
    `diff --git a/${path} b/${path}`,
    'new file mode 100644',
    'index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111',
    '--- /dev/null',
    `+++ b/${path}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');
}
