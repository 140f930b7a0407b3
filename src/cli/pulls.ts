// The lines `--wait` prints about the image pulls its jobs wait on (src/results/pulls.ts reads
// them from the job store).
import type { PullProgressDocument } from '../pull-progress.js';
import { pullText } from '../results/pulls.js';

/**
 * The lines `--wait` prints about pulls, from one look at the running jobs' pulls to the
 * next: a pull's first figures, then new figures at most every `everyMs`, and its end; a pull
 * whose figures did not change prints nothing, so a wait never floods its output.
 */
export function createPullLines(everyMs = 10_000) {
  const shown = new Map<number, { text: string; at: number; image: string }>();
  return (pulls: ReadonlyMap<number, PullProgressDocument>, now: number): string[] => {
    const lines: string[] = [];
    for (const [id, pull] of pulls) {
      const text = pullText(pull);
      const before = shown.get(id);
      if (before === undefined || (text !== before.text && now - before.at >= everyMs)) {
        lines.push(`job ${id} ${text}`);
        shown.set(id, { text, at: now, image: pull.image });
      }
    }
    for (const [id, before] of shown) {
      if (!pulls.has(id)) {
        lines.push(`job ${id} pull of ${before.image} ended`);
        shown.delete(id);
      }
    }
    return lines;
  };
}
