// SQLite-only: how dataVersion follows commits; the store's listing behaviour is in the
// conformance suite.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, tempStore } from '../helpers/temp.js';

describe('dataVersion', () => {
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('stays put while nothing is written, and moves at once on this connection’s own writes', async () => {
    const store = tempStore();
    const before = await store.dataVersion();
    await nextTurn();
    expect(await store.dataVersion()).toBe(before);
    await store.enqueue({ kind: 'noop', payload: {} });
    // Same event-loop turn: our own writes never wait for the next one.
    const after = await store.dataVersion();
    expect(after).not.toBe(before);
    await store.cancel([1]);
    expect(await store.dataVersion()).not.toBe(after);
  });

  it('shows another connection’s commit from the next event-loop turn on', async () => {
    const path = join(tempDir(), 'proctor.db');
    const store = tempStore({ path });
    const other = tempStore({ path });
    const before = await store.dataVersion();
    await other.enqueue({ kind: 'noop', payload: {} });
    // The file is read once per turn: a commit made after this turn's reading shows next turn.
    expect(await store.dataVersion()).toBe(before);
    await nextTurn();
    const after = await store.dataVersion();
    expect(after).not.toBe(before);
    await nextTurn();
    expect(await store.dataVersion()).toBe(after);
  });
});
