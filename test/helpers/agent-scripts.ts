// What the scripted model servers of the agent end-to-end tests ask an agent to do: look around
// the container, and make the fixture task's edit.

/** Shows the container from inside: every process's environment and argv, HOME's files, the socket folder. */
export const SHOW = [
  'for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ; tr "\\0" " " < $p/cmdline; echo; done 2>/dev/null',
  'find "$HOME" /run/proctor -type f -exec cat {} + 2>/dev/null',
  'ls -la /run/proctor',
].join('\n');

/** The lines a one-hunk patch takes out (`-`) and puts in (`+`), as texts. */
export function hunk(patch: string): { old: string; new: string } {
  const lines = patch.split('\n');
  const side = (sign: string) =>
    lines
      .filter((l) => l.startsWith(sign) && !l.startsWith(sign.repeat(3)))
      .map((l) => l.slice(1))
      .join('\n');
  return { old: side('-'), new: side('+') };
}
