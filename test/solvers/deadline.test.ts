// The solver deadline with real, short timings: it counts down on the monotonic clock, aborts
// its signal when spent, on dispose and on a linked parent's abort, and nothing extends it.
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { createDeadline } from '../../src/solvers/deadline.js';
import { onCleanup } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

describe('createDeadline', () => {
  it('counts down, then expires and aborts its signal with a TimeoutError', async () => {
    const deadline = createDeadline(200);
    onCleanup(() => deadline.dispose());
    expect(deadline.remainingMs()).toBeGreaterThan(100);
    expect(deadline.remainingMs()).toBeLessThanOrEqual(200);
    expect(deadline.expired()).toBe(false);
    expect(deadline.signal.aborted).toBe(false);
    const started = performance.now();
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(deadline.expired()).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
    expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('is already expired and aborted when made with 0 ms', () => {
    const deadline = createDeadline(0);
    expect(deadline.expired()).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
    expect(deadline.signal.aborted).toBe(true);
  });

  it('aborts its signal as soon as expired() sees the time is up, even if its timer is late', () => {
    const deadline = createDeadline(20);
    const until = performance.now() + 40;
    while (performance.now() < until); // a busy event loop: the timer cannot run
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.expired()).toBe(true);
    expect(deadline.signal.aborted).toBe(true);
  });

  it('aborts on dispose without counting as expired, and keeps counting down', () => {
    const deadline = createDeadline(60_000);
    deadline.dispose();
    deadline.dispose();
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as DOMException).name).toBe('AbortError');
    expect(deadline.expired()).toBe(false);
    expect(deadline.remainingMs()).toBeGreaterThan(59_000);
  });

  it('aborts with the reason of a linked parent, now or later', () => {
    const parent = new AbortController();
    const deadline = createDeadline(60_000).linked(parent.signal);
    onCleanup(() => deadline.dispose());
    expect(deadline.signal.aborted).toBe(false);
    parent.abort('cancelled by the user');
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe('cancelled by the user');
    expect(deadline.expired()).toBe(false);

    const late = createDeadline(60_000).linked(AbortSignal.abort('already'));
    onCleanup(() => late.dispose());
    expect(late.signal.reason).toBe('already');
  });

  it('cannot be extended: linking, disposing and time only ever shorten it', async () => {
    const deadline = createDeadline(300);
    onCleanup(() => deadline.dispose());
    const first = deadline.remainingMs();
    deadline.linked(new AbortController().signal);
    const second = deadline.remainingMs();
    expect(second).toBeLessThanOrEqual(first);
    await waitFor(() => deadline.expired(), { timeoutMs: 2000, what: 'the deadline to expire' });
    deadline.linked(new AbortController().signal);
    expect(deadline.expired()).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
    expect(Object.keys(deadline).sort()).toEqual([
      'dispose',
      'expired',
      'linked',
      'remainingMs',
      'signal',
    ]);
  });

  it('stops listening to its parent once disposed', () => {
    const parent = new AbortController();
    let listeners = 0;
    const add = parent.signal.addEventListener.bind(parent.signal);
    const remove = parent.signal.removeEventListener.bind(parent.signal);
    parent.signal.addEventListener = (...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    };
    parent.signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    };
    const deadline = createDeadline(60_000).linked(parent.signal);
    expect(listeners).toBe(1);
    deadline.dispose();
    expect(listeners).toBe(0);
  });

  it('rejects a negative or non-finite budget', () => {
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let thrown: unknown;
      try {
        createDeadline(ms);
      } catch (error) {
        thrown = error;
      }
      expect(isProctorError(thrown, 'USAGE')).toBe(true);
    }
  });
});
