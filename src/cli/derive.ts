// `proctor derive`: a task bundle from a fix commit (src/derive), then `baseline --gold` on
// it before success is reported. Exit 0 when the bundle is written and valid; 1 when it
// cannot be derived (no hidden test, the gold patch breaks a test, the runner fails) or its
// baseline quarantines it (the bundle then stays, for inspection); 2 for usage errors.
import { join } from 'node:path';
import { buildTrust, dockerHost } from '../config.js';
import { isProctorError, ProctorError } from '../errors.js';
import { STATE_NAMES, STATES } from '../derive/classify.js';
import { derive, type DeriveOptions } from '../derive/derive.js';
import { createDockerClient, requireDocker } from '../sandbox/docker.js';
import { createImageCache } from '../workers/images.js';
import { baselineCommand } from './baseline.js';
import type { CommandContext } from './context.js';

/** 128 + SIGINT, as a shell reports a command it interrupted. */
const EXIT_INTERRUPTED = 130;

const seconds = (ms: number | undefined) => `${((ms ?? 0) / 1000).toFixed(1)} s`;

export async function deriveCommand(
  context: CommandContext,
  options: DeriveOptions,
): Promise<number> {
  const { io, config } = context;
  const docker = createDockerClient(dockerHost());
  await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
  const sandbox = config.sandbox;
  // SIGINT/SIGTERM abort the build or the running state: derive then removes its containers,
  // volumes and staged bundle before this exits 130, so an interrupted derive leaves nothing.
  const interrupt = new AbortController();
  const onSignal = () => {
    if (!interrupt.signal.aborted) io.err('proctor: derive: interrupted; removing what it made');
    interrupt.abort(new ProctorError('CANCELLED', 'derive was interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result;
  try {
    result = await derive(options, {
      signal: interrupt.signal,
      docker,
      images: createImageCache(
        docker,
        {
          dir: join(config.home, 'cache', 'contexts'),
          now: () => context.clock.now(),
        },
        { trust: buildTrust(config), timeoutMs: config.images.timeoutMs },
      ),
      home: config.home,
      host: config.host,
      sandbox: {
        uid: sandbox.uid,
        gid: sandbox.gid,
        ...(sandbox.runtime !== 'runc' ? { runtime: sandbox.runtime } : {}),
      },
      note: (line) => io.err(line),
    });
  } catch (error) {
    if (interrupt.signal.aborted) return EXIT_INTERRUPTED;
    if (!isProctorError(error, 'DERIVE_FAILED')) throw error;
    // The whole message: a runner's failure carries its last lines, which say why.
    io.err(`proctor: derive: ${error.message}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const { classified: c, timings } = result;
  io.out(`wrote ${result.bundle.dir} (id ${result.bundle.id})`);
  io.out(`  base ${result.base} -> base_commit ${result.baseCommit} (one-commit snapshot)`);
  io.out(`  fix ${result.fix}`);
  io.out(
    `  tests/hidden.patch: ${result.hiddenFiles.length} file(s): ${result.hiddenFiles.join(', ')}`,
  );
  io.out(
    `  solution/gold.patch: ${result.goldFiles.length} file(s): ${result.goldFiles.join(', ')}`,
  );
  for (const e of result.excluded) io.out(`  excluded ${e.path} (${e.glob})`);
  io.out(`  hidden.txt: ${c.hidden.length} test(s); existing.txt: ${c.existing.length} test(s)`);
  if (c.flaky.length > 0) {
    io.out(`  dropped ${c.flaky.length} flaky test(s):`);
    for (const f of c.flaky) io.out(`    ${f.id} (${f.state}: ${f.outcomes.join(' / ')})`);
  }
  if (c.dropped > 0) {
    io.out(
      `  left out ${c.dropped} test(s) that do not pass in every state (skipped, xfail, failing, deleted):`,
    );
    for (const t of c.leftOut) {
      const seen = STATES.map((s) => `${STATE_NAMES[s]} ${t.outcomes[s]}`).join(', ');
      io.out(`    ${t.id} (${seen})`);
    }
    if (c.dropped > c.leftOut.length) io.out(`    … and ${c.dropped - c.leftOut.length} more`);
  }
  io.out(
    `  timings: snapshot ${seconds(timings['snapshot'])}, image ${seconds(timings['image'])}, four states ${seconds(timings['runs'])} (runner ${seconds(timings['runner'])}), total ${seconds(timings['total'])}`,
  );
  io.out('checking it with: proctor baseline --gold --wait');
  const code = await baselineCommand(context, [result.bundle.dir], {
    gold: true,
    repeat: 1,
    wait: true,
  });
  if (code !== 0)
    io.err(
      `proctor: derive: the baseline of ${result.bundle.dir} did not pass; the bundle is kept for inspection`,
    );
  return code;
}
