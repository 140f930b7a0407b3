// Files handed to a short-lived container on its command line: Linux caps each argument at
// 128 KiB (MAX_ARG_STRLEN), and a runner written with its shared parts is larger than that in
// base64, so each file goes in chunks under the cap and a line of shell joins them again.

/** One argument may hold at most 128 KiB, its terminating NUL included. */
const MAX_ARGUMENT = 128 * 1024 - 1;
/** All arguments and the environment share ARG_MAX (2 MiB here); leave room for the rest. */
export const MAX_FILE_ARGUMENTS_BYTES = 1536 * 1024;

export interface FileArguments {
  /**
   * Shell that writes each file to `folder/<name>` from the leading arguments and shifts them
   * away: after it, "$1", "$2", … are the arguments that followed the files.
   */
  script: string;
  /** The files' base64 chunks, to go first among the script's arguments. */
  args: string[];
  /** The chunks' size in all. */
  bytes: number;
}

/**
 * The arguments and shell for `files` (name, bytes), written under `folder`. Names are the
 * caller's own, never a task's: [A-Za-z0-9._-] only.
 */
export function fileArguments(
  folder: string,
  files: ReadonlyArray<readonly [name: string, bytes: Uint8Array]>,
): FileArguments {
  const lines: string[] = [];
  const args: string[] = [];
  for (const [name, bytes] of files) {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`not a file name for a probe: ${name}`);
    const text = Buffer.from(bytes).toString('base64');
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += MAX_ARGUMENT) {
      chunks.push(text.slice(at, at + MAX_ARGUMENT));
    }
    if (chunks.length === 0) chunks.push('');
    const refs = chunks.map((_, i) => `"\${${i + 1}}"`).join(' ');
    lines.push(`printf %s ${refs} | base64 -d > ${folder}/${name}`, `shift ${chunks.length}`);
    args.push(...chunks);
  }
  return { script: lines.join('\n'), args, bytes: args.reduce((n, a) => n + a.length, 0) };
}
