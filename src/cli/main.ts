// The `proctor` command line. Every expected failure ends as one line on stderr and an exit
// code: 2 for usage and infrastructure errors (bad flags, unreadable database or config),
// never a stack trace.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ProctorError, describeError } from '../errors.js';
import { MAX_PAGE } from '../queue/index.js';
import { cancelCommand } from './cancel.js';
import { UsageError, createContext, processIo, type Io } from './context.js';
import { statusCommand } from './status.js';
import { validateCommand } from './validate.js';

export const EXIT_USAGE = 2;

function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) {
    throw new InvalidArgumentError(`expected an integer from 1 to ${MAX_PAGE}`);
  }
  return n;
}

function buildProgram(io: Io, run: (action: () => Promise<number>) => Promise<void>): Command {
  const program = new Command('proctor')
    .description('Measure coding agents on repository tasks in hardened Docker containers.')
    .addOption(
      new Option(
        '--home <dir>',
        'where the database and artifacts live (default: $PROCTOR_HOME, else ./.proctor)',
      ),
    )
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
    });
  const home = () => program.opts<{ home?: string }>().home;

  program
    .command('validate')
    .description('check task bundles or suites: format, paths, image identity and base commit')
    .argument('<paths...>', 'bundle or suite folders')
    .option('--static', 'only the format and path checks (no Docker)')
    .option('--json', 'machine-readable output')
    .exitOverride()
    .action((paths: string[], options: { static?: boolean; json?: boolean }) =>
      run(() => validateCommand(createContext(home(), io), paths, options)),
    );

  program
    .command('status')
    .description('show counts by status, batches with rate and ETA, or the named jobs')
    .argument('[jobs...]', 'job ids')
    .option('--batch <id>', 'one batch and its first jobs')
    .option('--json', 'machine-readable output')
    .addOption(
      new Option('--limit <n>', `at most this many batches or jobs (1-${MAX_PAGE})`)
        .default(20)
        .argParser(pageSize),
    )
    .exitOverride()
    .action((jobs: string[], options: { batch?: string; json?: boolean; limit: number }) =>
      run(() => statusCommand(createContext(home(), io), jobs, options)),
    );

  program
    .command('cancel')
    .description('cancel jobs: queued ones at once, running ones within seconds')
    .argument('[jobs...]', 'job ids')
    .option('--batch <id>', 'every unfinished job of a batch')
    .exitOverride()
    .action((jobs: string[], options: { batch?: string }) =>
      run(() => cancelCommand(createContext(home(), io), jobs, options)),
    );

  return program;
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let code = 0;
  const run = async (action: () => Promise<number>) => {
    code = await action();
  };
  const program = buildProgram(io, run);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander reports is usage.
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (error instanceof UsageError) {
      io.err(`proctor: ${error.message}`);
      return EXIT_USAGE;
    }
    if (error instanceof ProctorError) {
      io.err(`proctor: ${error.message}`);
      return EXIT_USAGE;
    }
    io.err(`proctor: internal error: ${describeError(error)}`);
    return EXIT_USAGE;
  }
}
