// A process that announces itself as a worker of a home and then only lives, so tests can
// SIGKILL it: the presence it leaves must not outlive it. It forces a garbage collection
// after announcing, since a lock that only a collectable object holds would vanish early.
// With `probe`, it prints the live workers of the home as JSON and exits: a check from
// another process, as a waiting command makes it.
//
// usage: presence-child.ts HOME OWNER [worker|pool]   or   presence-child.ts HOME probe
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { announceWorker, liveWorkers } from '../../src/workers/presence.js';

const [home, owner, role] = process.argv.slice(2);
if (!home || !owner) throw new Error('usage: presence-child.ts HOME OWNER [worker|pool]');
if (owner === 'probe') {
  process.stdout.write(`${JSON.stringify(liveWorkers(home))}\n`);
} else {
  announceWorker(home, owner, role === 'pool' ? 'pool' : 'worker');
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  process.stdout.write('held\n');
  setInterval(() => undefined, 60_000);
}
