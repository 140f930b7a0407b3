// `proctor impossible SUITE --out SUITE2 [--mode one-off|conflicting]`: impossible variants of
// a suite (src/impossible/). Prints one line per task (written, with the test and its change,
// or skipped, with why), then how many were written and skipped. Exit 0 when at least one
// variant was written, 1 when none was, 2 for usage and infrastructure errors (a missing
// suite, --out that exists, a bad --mode, no Docker engine).
import { join } from 'node:path';
import { buildTrust, dockerHost } from '../config.js';
import { isProctorError, ProctorError } from '../errors.js';
import { writeImpossible } from '../impossible/impossible.js';
import { IMPOSSIBLE_MODES, type ImpossibleMode } from '../oracle/index.js';
import { createDockerClient, requireDocker } from '../sandbox/docker.js';
import { createImageCache } from '../workers/images.js';
import { discardStaging } from '../derive/write.js';
import type { CommandContext } from './context.js';

/** 128 + SIGINT, as a shell reports a command it interrupted. */
const EXIT_INTERRUPTED = 130;

export function parseMode(value: string): ImpossibleMode {
  if (!(IMPOSSIBLE_MODES as readonly string[]).includes(value)) {
    throw new ProctorError(
      'USAGE',
      `--mode: expected one of ${IMPOSSIBLE_MODES.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as ImpossibleMode;
}

export async function impossibleCommand(
  context: CommandContext,
  suite: string,
  options: { out: string; mode: ImpossibleMode },
): Promise<number> {
  const { io, config } = context;
  const docker = createDockerClient(dockerHost());
  await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
  const interrupt = new AbortController();
  const onSignal = () => {
    if (!interrupt.signal.aborted)
      io.err('proctor: impossible: interrupted; removing what it made');
    interrupt.abort(new ProctorError('CANCELLED', 'impossible was interrupted'));
    discardStaging();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result;
  try {
    result = await writeImpossible(
      { suite, out: options.out, mode: options.mode },
      {
        docker,
        images: createImageCache(
          docker,
          { dir: join(config.home, 'cache', 'contexts'), now: () => context.clock.now() },
          { trust: buildTrust(config), timeoutMs: config.images.timeoutMs },
        ),
        home: config.home,
        host: config.host,
        sandbox: {
          uid: config.sandbox.uid,
          gid: config.sandbox.gid,
          ...(config.sandbox.runtime !== 'runc' ? { runtime: config.sandbox.runtime } : {}),
        },
        signal: interrupt.signal,
        note: (line) => io.out(line),
      },
    );
  } catch (error) {
    if (interrupt.signal.aborted) return EXIT_INTERRUPTED;
    if (!isProctorError(error, 'IMPOSSIBLE_FAILED')) throw error;
    io.err(`proctor: impossible: ${error.message}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const { written, skipped } = result;
  io.out(
    `${written.length} variant(s) written, ${skipped.length} task(s) skipped (mode ${options.mode})${written.length > 0 ? `: ${result.out}` : ''}`,
  );
  if (written.length === 0) return 1;
  io.out(`check that each is impossible with: proctor baseline ${result.out} --gold --wait`);
  return 0;
}
