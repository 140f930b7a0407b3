// The solver deadline (seed 003: "Each provider request receives the remaining solver deadline,
// while the Docker tool surface shares the same wall-time budget"): one budget, fixed when the
// solve starts, that every model request and every tool call spends. Nothing can extend it:
// there is no setter, `linked` and `dispose` only end it sooner, and a caller that wants a
// shorter limit takes `Math.min` with `remainingMs()`.
//
// Time is read from the monotonic clock (performance.now()), so a wall-clock step (NTP, a
// suspended laptop's resume) neither extends nor cuts the budget.
import { performance } from 'node:perf_hooks';
import { ProctorError } from '../errors.js';

export interface Deadline {
  /** Milliseconds left, never negative. */
  remainingMs(): number;
  /** True once the budget is spent (not when it was merely disposed or its parent aborted). */
  expired(): boolean;
  /**
   * Aborted when the budget is spent (reason: a `TimeoutError` DOMException), on `dispose()`
   * (an `AbortError`), or when a linked parent aborts (the parent's reason).
   */
  readonly signal: AbortSignal;
  /** Also aborts `signal` when `parent` aborts (the job's cancel); returns the same deadline. */
  linked(parent: AbortSignal): Deadline;
  /** Clears the timer and aborts `signal`; `remainingMs()` keeps counting down. Idempotent. */
  dispose(): void;
}

export function createDeadline(ms: number): Deadline {
  if (!(Number.isFinite(ms) && ms >= 0)) {
    throw new ProctorError('USAGE', `Expected \`ms\` to be a finite number >= 0, got \`${ms}\``);
  }
  const end = performance.now() + ms;
  const controller = new AbortController();
  const unlinks: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;

  const remainingMs = (): number => Math.max(0, end - performance.now());
  const abort = (reason: unknown): void => {
    clearTimeout(timer);
    for (const unlink of unlinks.splice(0)) unlink();
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const expire = (): void =>
    abort(new DOMException(`the solver deadline of ${ms} ms was reached`, 'TimeoutError'));
  // Timers run on libuv's millisecond clock and may fire a fraction early by performance.now():
  // re-arm for the rest, so that an aborted-for-time signal always means expired() is true.
  const arm = (): void => {
    const left = remainingMs();
    if (left === 0) {
      expire();
      return;
    }
    timer = setTimeout(arm, Math.ceil(left));
    timer.unref(); // the deadline alone must not keep the process alive
  };

  const deadline: Deadline = {
    remainingMs,
    expired() {
      if (remainingMs() > 0) return false;
      expire(); // the timer may be late when the event loop is busy; the signal must not be
      return true;
    },
    signal: controller.signal,
    linked(parent) {
      if (parent.aborted) abort(parent.reason);
      else if (!controller.signal.aborted) {
        const onAbort = (): void => abort(parent.reason);
        parent.addEventListener('abort', onAbort, { once: true });
        unlinks.push(() => parent.removeEventListener('abort', onAbort));
      }
      return deadline;
    },
    dispose() {
      abort(new DOMException('the solver deadline was disposed', 'AbortError'));
    },
  };
  arm();
  return deadline;
}
