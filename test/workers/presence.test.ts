// Worker presence over real processes and a real SIGKILL: a worker counts only while its own
// process holds its lock, whatever pid a leftover file names.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  announceWorker,
  isDeadLocalOwner,
  liveWorkers,
  sweepPresence,
} from '../../src/workers/index.js';
import { spawnTs } from '../helpers/processes.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = 'test/helpers/presence-child.ts';

/** A live process that is no worker: the pid a stale file names once the pid is reused. */
function unrelatedPid(): number {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  onCleanup(() => {
    child.kill('SIGKILL');
  });
  if (child.pid === undefined) throw new Error('could not start sleep');
  return child.pid;
}

async function holder(home: string, owner: string, role: 'worker' | 'pool' = 'worker') {
  const child = spawnTs(CHILD, [home, owner, role]);
  await waitFor(() => child.stdout().includes('held'), {
    what: 'the presence child',
    timeoutMs: 60_000,
  });
  return child;
}

/** The live workers of `home` as another process sees them. */
async function probeFromOutside(home: string): Promise<string[]> {
  const child = spawnTs(CHILD, [home, 'probe']);
  expect((await child.exited).code).toBe(0);
  return JSON.parse(child.stdout()) as string[];
}

const ownerNaming = (pid: number, tag: string) => `${hostname()}/${pid}/${tag}`;
const fileOf = (owner: string) => `worker-${encodeURIComponent(owner)}.lock`;

describe('worker presence', () => {
  it('counts a worker while its process lives (after a GC too), and not after a SIGKILL', async () => {
    const home = tempDir();
    const child = await holder(home, ownerNaming(4242, 'aaaa0001'));
    expect(liveWorkers(home)).toEqual([ownerNaming(4242, 'aaaa0001')]);
    expect(isDeadLocalOwner(ownerNaming(4242, 'aaaa0001'), home)).toBe(false);

    child.process.kill('SIGKILL');
    await child.exited;
    expect(liveWorkers(home)).toEqual([]);
  });

  it('never counts a leftover file naming a live pid: an old pid-named file or a dead lock file', async () => {
    const home = tempDir();
    const pid = unrelatedPid();
    mkdirSync(join(home, 'workers'), { recursive: true });
    writeFileSync(join(home, 'workers', `${hostname()}-${pid}`), `${ownerNaming(pid, 'old')}\n`);
    const [dead, pending, live] = await Promise.all(
      ['bbbb0002', 'bbbb0012', 'bbbb0022'].map((tag) => holder(home, ownerNaming(pid, tag))),
    );
    for (const child of [dead, pending]) child?.process.kill('SIGKILL');
    await Promise.all([dead?.exited, pending?.exited]);

    const alive = [ownerNaming(pid, 'bbbb0022')];
    expect(liveWorkers(home)).toEqual(alive);
    expect(await probeFromOutside(home)).toEqual(alive);
    // A starting pool's sweep removes the old file and a dead owner's, but neither the file of
    // a dead owner whose jobs are still to be reclaimed, nor a live one's.
    sweepPresence(home, new Set([ownerNaming(pid, 'bbbb0012')]));
    expect(readdirSync(join(home, 'workers')).sort()).toEqual(
      ['bbbb0012', 'bbbb0022'].map((tag) => fileOf(ownerNaming(pid, tag))).sort(),
    );
    expect(liveWorkers(home)).toEqual(alive);
    live?.process.kill('SIGKILL');
    await live?.exited;
    sweepPresence(home, new Set());
    expect(readdirSync(join(home, 'workers'))).toEqual([]);
  }, 180_000);

  it('proves a SIGKILLed worker dead even when its pid now names a live process', async () => {
    const home = tempDir();
    const pid = unrelatedPid();
    const owner = ownerNaming(pid, 'cccc0003');
    const child = await holder(home, owner);
    expect(isDeadLocalOwner(owner, home)).toBe(false);
    child.process.kill('SIGKILL');
    await child.exited;
    expect(isDeadLocalOwner(owner, home)).toBe(true);
    // Without a lock file (an owner from before presence locks) the pid still decides.
    expect(isDeadLocalOwner(ownerNaming(pid, 'dddd0004'), home)).toBe(false);
    expect(isDeadLocalOwner(ownerNaming(pid, 'dddd0004'))).toBe(false);
  });

  it("a waiting command's pool proves its owner alive but does not serve the home", async () => {
    const home = tempDir();
    const owner = ownerNaming(4343, 'eeee0005');
    const child = await holder(home, owner, 'pool');
    expect(liveWorkers(home)).toEqual([]);
    expect(isDeadLocalOwner(owner, home)).toBe(false);
    child.process.kill('SIGKILL');
    await child.exited;
    expect(isDeadLocalOwner(owner, home)).toBe(true);
  });

  it('in this process: counts its own announcement and removes the file when withdrawn', async () => {
    const home = tempDir();
    const owner = ownerNaming(process.pid, 'ffff0006');
    const withdraw = announceWorker(home, owner);
    expect(liveWorkers(home)).toEqual([owner]);
    // Checking its own file did not drop its lock (closing a POSIX-locked file would).
    expect(await probeFromOutside(home)).toEqual([owner]);
    withdraw();
    expect(liveWorkers(home)).toEqual([]);
    expect(existsSync(join(home, 'workers')) && readdirSync(join(home, 'workers'))).toEqual([]);
  });
});
