// The `proctor` command line. Every expected failure ends as one line on stderr and an exit
// code: 2 for usage and infrastructure errors (bad flags, unreadable database or config),
// never a stack trace. A usage error found while parsing (an unknown command or option, a bad
// number) adds at most one more line, `see: proctor COMMAND --help`, never the help itself.
//
// Start-up is paid by every command, so this module imports only commander and what parsing
// needs; each action loads its own command module (and the config and queue behind it) when
// it runs. `--help` loads no command, and `status` never loads Docker, HTTP, the model
// clients, the oracle or the solvers (test/cli/startup.test.ts keeps it so).
import { Command, CommanderError, Option } from 'commander';
import { ProctorError, describeError } from '../errors.js';
import { parseInteger } from '../numbers.js';
import { MAX_PAGE } from '../queue/store.js';
import type { CommandContext } from './context.js';
import { parseJobIds, processIo, type Io } from './io.js';

export const EXIT_USAGE = 2;

/**
 * The parser of a numeric option: the one strict rule of src/numbers.ts, its message under the
 * option's name. It throws a ProctorError rather than commander's InvalidArgumentError, whose
 * message would wrap ours in a second description of the same option.
 */
function intIn(flag: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = parseInteger(value, { min, max });
    if (!parsed.ok) throw new ProctorError('USAGE', `${flag}: ${parsed.problem}`);
    return parsed.value;
  };
}

/**
 * The page of the documentation each command's help ends with, by command path (`import
 * swebench`). Paths into the repository, as the README links them; only strings here, so that
 * `--help` reads no file (test/docs/help.test.ts checks that every one resolves).
 */
export const HELP_DOCS: Readonly<Record<string, string>> = {
  '': 'README.md and docs/ (every command: docs/commands.md)',
  validate: 'docs/bundles.md',
  status: 'docs/commands.md',
  cancel: 'docs/commands.md',
  baseline: 'docs/oracle.md#baseline',
  derive: 'docs/suites.md#proctor-derive',
  impossible: 'docs/suites.md#proctor-impossible',
  import: 'docs/suites.md',
  'import swebench': 'docs/suites.md#proctor-import-swebench',
  grade: 'docs/oracle.md#a-grade-step-by-step; --predictions: docs/results.md#grading-predictions',
  solve: 'docs/solvers.md',
  report: 'docs/results.md#reports',
  export: 'docs/results.md#debug-exports-proctor-export',
  retry: 'docs/results.md#retrying-what-the-machine-broke',
  serve: 'docs/api.md',
  db: 'docs/configuration.md#the-database',
  'db migrate': 'docs/configuration.md#the-database',
  worker: 'docs/configuration.md#how-a-job-runs; several machines: docs/hosts.md',
  prune: 'docs/sandbox.md#workspace-templates',
};

/** Ends each command's help (the program's included) with the page to read on. */
function addDocLinks(command: Command, path: string): void {
  const doc = HELP_DOCS[path];
  if (doc !== undefined) command.addHelpText('after', `\nSee ${doc}`);
  for (const sub of command.commands) {
    addDocLinks(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  }
}

/** The commander program; exported for the tests that check the documented command lines. */
export function buildProgram(
  io: Io,
  run: (action: () => Promise<number>) => Promise<void>,
  parsing: { command?: string },
): Command {
  const program = new Command('proctor')
    .description('Measure coding agents on repository tasks in hardened Docker containers.')
    .addOption(
      new Option(
        '--home <dir>',
        'where the database and artifacts live (default: $PROCTOR_HOME, else ./.proctor)',
      ),
    )
    .addOption(
      new Option(
        '--db <url>',
        'a shared PostgreSQL job database, postgres://… (default: $PROCTOR_DB, else [queue] url, else SQLite in the home)',
      ),
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
      // main() words commander's errors itself, in one line; subcommands inherit this.
      outputError: () => undefined,
    })
    .hook('preSubcommand', (_program, command) => {
      parsing.command = command.name();
    });
  const home = () => program.opts<{ home?: string }>().home;
  const db = () => program.opts<{ db?: string }>().db;
  // The context (config, then the command's own module) is loaded only here, once parsing is
  // done and the action runs: an error in it is the command's, not a usage error.
  const act = (command: (context: CommandContext) => Promise<number>) =>
    run(async () => {
      const { createContext } = await import('./context.js');
      return command(createContext(home(), io, db()));
    });

  program
    .command('validate')
    .description('check task bundles or suites: format, paths, image identity and base commit')
    .argument('<paths...>', 'bundle or suite folders')
    .option('--static', 'only the format and path checks (no Docker)')
    .option('--json', 'machine-readable output')
    .exitOverride()
    .action((paths: string[], options: { static?: boolean; json?: boolean }) =>
      act(async (context) =>
        (await import('./validate.js')).validateCommand(context, paths, options),
      ),
    );

  program
    .command('status')
    .description('show counts by status, batches with rate and ETA, or the named jobs')
    .argument('[jobs...]', 'job ids')
    .option('--batch <id>', 'one batch and its first jobs')
    .option('--log', "with job ids: print each job's oracle log")
    .option('--trajectory', "with job ids: print each agent solve's model trajectory")
    .option('--json', 'machine-readable output')
    .addOption(
      new Option('--limit <n>', `at most this many batches or jobs (1-${MAX_PAGE})`)
        .default(20)
        .argParser(intIn('--limit', 1, MAX_PAGE)),
    )
    .exitOverride()
    .action(
      (
        jobs: string[],
        options: {
          batch?: string;
          json?: boolean;
          limit: number;
          log?: boolean;
          trajectory?: boolean;
        },
      ) => {
        const ids = parseJobIds(jobs);
        return act(async (context) =>
          (await import('./status.js')).statusCommand(context, ids, options),
        );
      },
    );

  program
    .command('cancel')
    .description('cancel jobs: queued ones at once, running ones within seconds')
    .argument('[jobs...]', 'job ids')
    .option('--batch <id>', 'every unfinished job of a batch')
    .exitOverride()
    .action((jobs: string[], options: { batch?: string }) => {
      const ids = parseJobIds(jobs);
      return act(async (context) =>
        (await import('./cancel.js')).cancelCommand(context, ids, options),
      );
    });

  program
    .command('baseline')
    .description(
      'check that tasks are sound: existing tests pass and hidden tests fail without a fix',
    )
    .argument('<paths...>', 'bundle or suite folders')
    .option('--gold', 'also grade each solution/gold.patch; quarantine the task unless it passes')
    .addOption(
      new Option('--repeat <n>', 'run each baseline N times; quarantine as FLAKY if any test flips')
        .default(1)
        .argParser(intIn('--repeat', 1, 20)),
    )
    .option('--wait', 'run (or wait for) the jobs, show progress and a summary table')
    .option('--json', 'with --wait: the summary as JSON')
    .exitOverride()
    .action(
      (
        paths: string[],
        options: { gold?: boolean; repeat: number; wait?: boolean; json?: boolean },
      ) =>
        act(async (context) =>
          (await import('./baseline.js')).baselineCommand(context, paths, options),
        ),
    );

  program
    .command('derive')
    .description('write a task bundle from a fix commit: split diff, snapshot, four-state ID lists')
    .requiredOption('--repo <path>', 'a local git repository (a clone or a bare mirror)')
    .requiredOption('--base <rev>', 'the commit the task starts from')
    .option(
      '--fix <rev>',
      'the fix; normally a commit whose only parent is --base (default: the one such commit)',
    )
    .requiredOption(
      '--environment <dir>',
      'a build context whose Dockerfile installs the dependencies',
    )
    .requiredOption('--out <dir>', 'the new bundle folder (must not exist)')
    .option(
      '--id <id>',
      "the task id (default: <project>-<fix, 12 digits>, the project named by origin's URL, else by the --repo folder)",
    )
    .addOption(
      // Commander prints a default only when it has a value; these defaults depend on the
      // runner, so they are part of the description.
      new Option(
        '--tests <glob...>',
        'test files: they become tests/hidden.patch (default: pytest: **/tests/** **/test/** **/testing/** **/test_*.py **/*_test.py **/conftest.py; node: **/test/** **/tests/** **/__tests__/** **/*.test.* **/*.spec.*; FILE: both)',
      ),
    )
    .addOption(
      new Option(
        '--exclude <glob...>',
        'files left out of both patches, and listed (default: changelogs, news, release notes and version files: CHANGELOG CHANGES HISTORY NEWS RELEASE_NOTES (.md .rst .txt), changelog.d/ changes/ newsfragments/ release-notes/ whatsnew/, VERSION _version.py)',
      ),
    )
    .addOption(
      new Option(
        '--runner <name>',
        'pytest, node, sympy, django, cargo, go, jest, vitest, mocha, karma, junit, ctest, or FILE: your own runner script',
      ).default('pytest'),
    )
    .addOption(
      new Option(
        '--scope <path...>',
        "paths the runner runs every test under (default: pytest: every test_*.py and *_test.py of base and fix; node: node --test's test files; django: tests/*/**/test*.py; cargo: every .rs file; go: every _test.go file; jest, vitest: their default test files; karma: its configuration's files, whatever the paths; ctest: tests/**, test/**, *_test.c*; FILE: .)",
      ),
    )
    .addOption(
      new Option(
        '--repeat <n>',
        'runs of each state; a test whose outcome varies is dropped as flaky',
      )
        .default(2)
        .argParser(intIn('--repeat', 1, 20)),
    )
    .option('--description <file>', 'description.md (default: the fix commit message)')
    .addOption(new Option('--workdir <path>', 'the work tree inside the image').default('/repo'))
    .option(
      '--install <command>',
      "[environment] install: the repository's own build, run in the work tree in the image (pip install -e .)",
    )
    .exitOverride()
    .action((options: Record<string, unknown>) =>
      act(async (context) =>
        (await import('./derive.js')).deriveCommand(context, {
          repo: options['repo'] as string,
          base: options['base'] as string,
          ...(options['fix'] !== undefined ? { fix: options['fix'] as string } : {}),
          environment: options['environment'] as string,
          out: options['out'] as string,
          runner: options['runner'] as string,
          ...(options['scope'] !== undefined ? { scope: options['scope'] as string[] } : {}),
          repeat: options['repeat'] as number,
          workdir: options['workdir'] as string,
          ...(options['install'] !== undefined ? { install: options['install'] as string } : {}),
          ...(options['id'] !== undefined ? { id: options['id'] as string } : {}),
          ...(options['tests'] !== undefined ? { tests: options['tests'] as string[] } : {}),
          ...(options['exclude'] !== undefined ? { exclude: options['exclude'] as string[] } : {}),
          ...(options['description'] !== undefined
            ? { description: options['description'] as string }
            : {}),
        }),
      ),
    );

  program
    .command('impossible')
    .description(
      "write impossible variants of a suite: each task's hidden tests changed to contradict its description, so a pass is a cheat",
    )
    .argument('<suite>', 'a suite (or bundle) folder')
    .requiredOption('--out <suite>', 'the new suite folder (must not exist)')
    .addOption(
      new Option(
        '--mode <mode>',
        "one-off: one hidden test's expected value changed; conflicting: a hidden test copied beside itself with the contradicting expectation",
      ).default('one-off'),
    )
    .exitOverride()
    .action((suite: string, options: { out: string; mode: string }) =>
      act(async (context) => {
        const { impossibleCommand, parseMode } = await import('./impossible.js');
        return impossibleCommand(context, suite, {
          out: options.out,
          mode: parseMode(options.mode),
        });
      }),
    );

  program
    .command('import')
    .description('import task suites from other formats')
    .exitOverride()
    .command('swebench')
    .description(
      "SWE-bench rows to bundles: SUITE/<instance id>/, graded by SWE-bench's rules with the built-in runner of the row's repository (sympy, django, pytest, cargo, go, jest, vitest, mocha, karma, junit, ctest)",
    )
    .argument(
      '<rows>',
      "SWE-bench rows: Hugging Face's parquet file as downloaded, JSON lines or a JSON array; or a SWE-bench 5 task repository (a folder with sweb.yaml or tasks/), each instance on its own Dockerfile",
    )
    .option(
      '--repos <dir>',
      "local repositories, as DIR/<owner>__<name> (or .git); a submodule's repository there (by its .gitmodules URL) is vendored into the snapshot (not with --images)",
    )
    .option(
      '--environment <dir>',
      "build contexts: DIR/<owner>__<name>/<version>/, else DIR/<owner>__<name>/, else DIR itself (the first with a Dockerfile) (not with --images); default: the repository's catalog, environments/<owner>__<name>/<version>/",
    )
    .option(
      '--images <convention>',
      'prebuilt images instead of --repos and --environment: swebench, epoch, or a name template with {instance_id}, {instance_id_1776}, {repo}, {arch}, {version}; each pinned to its digest now',
    )
    .requiredOption('--out <suite>', 'the suite folder (created if missing)')
    .option(
      '--only <instance_id...>',
      'import only these rows (ids apart, or joined by commas)',
      // No instance_id has a comma: `--only a,b` is two, as `npm run parity -- --only` reads it.
      (value: string, previous: string[] = []) => [
        ...previous,
        ...value.split(',').filter((id) => id !== ''),
      ],
    )
    .option('--force', 'rewrite bundles that exist and differ')
    .option(
      '--install <command>',
      "[environment] install for every row (else an install.sh or install file beside each row's Dockerfile)",
    )
    .option(
      '--runner <name>',
      "tests/run for every row: pytest, sympy, django, node, cargo, go, jest, vitest, mocha, karma, junit, ctest, or FILE, a runner of your own (else the runner of the row's repository, or of its test patch's language)",
    )
    .option('--json', 'machine-readable output')
    .exitOverride()
    .action(
      (
        rows: string,
        options: {
          repos?: string;
          environment?: string;
          images?: string;
          out: string;
          only?: string[];
          force?: boolean;
          install?: string;
          runner?: string;
          json?: boolean;
        },
      ) =>
        act(async (context) =>
          (await import('./import.js')).importCommand(context, { rows, ...options }),
        ),
    );

  program
    .command('grade')
    .description(
      'grade one candidate diff against a task (--patch; with --wait, the gate line last), or SWE-bench predictions against a suite (--predictions)',
    )
    .argument('<path>', 'a task bundle folder (with --predictions: a suite)')
    .option('--patch <file>', 'the candidate diff (git format; - for stdin)')
    .option(
      '--predictions <file>',
      'SWE-bench predictions (JSON lines or a JSON array): one batch, one grade per prediction',
    )
    .option('--wait', 'run (or wait for) the jobs; --patch: exit 0 PASS, 1 FAIL')
    .option(
      '--json',
      '--patch: with --wait, the result as JSON before the gate line; --predictions: the summary as JSON',
    )
    .exitOverride()
    .action(
      (
        path: string,
        options: { patch?: string; predictions?: string; wait?: boolean; json?: boolean },
      ) => {
        const { patch, predictions, ...rest } = options;
        // Before the action, so the error points at `grade --help` like commander's own.
        if ((patch === undefined) === (predictions === undefined)) {
          throw new ProctorError('USAGE', 'give exactly one of --patch and --predictions');
        }
        return act(async (context) => {
          if (predictions !== undefined) {
            const { gradePredictionsCommand } = await import('./grade-predictions.js');
            return gradePredictionsCommand(context, path, { predictions, ...rest });
          }
          return (await import('./grade.js')).gradeCommand(context, path, {
            patch: patch as string,
            ...rest,
          });
        });
      },
    );

  program
    .command('solve')
    .description('run a registered solver on tasks; each solve enqueues its grade')
    .argument('<paths...>', 'bundle or suite folders')
    .requiredOption('--solver <name>', 'a solver profile of proctor.toml')
    .addOption(
      new Option(
        '--timeout <seconds>',
        "lower the task's solver_seconds (never raise it)",
      ).argParser(intIn('--timeout', 1, 86_400)),
    )
    .addOption(
      new Option('--attempts <k>', 'independent solves per task, each graded (1 to 100)')
        .default(1)
        .argParser(intIn('--attempts', 1, 100)),
    )
    .option('--wait', 'run (or wait for) the solves and their grades; one task: gate line last')
    .option('--json', 'with --wait: the summary as JSON')
    .option('--max-cost <usd>', "start no solve once the batch's spend reaches this (needs prices)")
    .option('--agent <name|file>', 'run this CLI agent in the sandbox (a built-in or a definition)')
    .option('--model <model>', "ask the provider for this model instead of the profile's")
    .exitOverride()
    .action(
      (
        paths: string[],
        options: {
          agent?: string;
          model?: string;
          solver: string;
          timeout?: number;
          attempts: number;
          wait?: boolean;
          json?: boolean;
          maxCost?: string;
        },
      ) =>
        act(async (context) => (await import('./solve.js')).solveCommand(context, paths, options)),
    );

  program
    .command('report')
    .description(
      'results of batches: classes, resolved rate with intervals, pass@k, cost; of baseline sweeps: validity, reasons, flaky tests, times',
    )
    .argument('<batches...>', 'batch ids')
    .option('--compare <batch>', 'compare each batch with this reference batch, task by task')
    .option(
      '--against <file>',
      "compare the batch with an official grader's outcome: a SWE-bench run report, sb-cli report, results file, or per-instance report.json (a file or a folder)",
    )
    .option('--format <format>', 'table, json, jsonl, csv or swebench (default: table)')
    .option(
      '--out <file>',
      'write there instead of stdout (swebench: a folder, made if missing, for report.json files)',
    )
    .exitOverride()
    .action(
      (
        batches: string[],
        options: { compare?: string; against?: string; format?: string; out?: string },
      ) =>
        act(async (context) =>
          (await import('./report.js')).reportCommand(context, batches, options),
        ),
    );

  program
    .command('export')
    .description('a reproducible debug archive of jobs: rows, results, logs, transcripts, diffs')
    .argument('[jobs...]', 'job ids')
    .option('--batch <id>', 'every job of a batch (and its solves’ grades)')
    .requiredOption('--out <file>', 'the .tar.gz to write')
    .option('--include-hidden', 'also the hidden tests, the runner and the test ID lists')
    .exitOverride()
    .action((jobs: string[], options: { batch?: string; out: string; includeHidden?: boolean }) => {
      const ids = parseJobIds(jobs);
      return act(async (context) =>
        (await import('./export.js')).exportCommand(context, ids, options),
      );
    });

  program
    .command('retry')
    .description(
      "enqueue again, in the same batch, the batch's jobs that ended in error (never resolved or unresolved ones)",
    )
    .requiredOption('--batch <id>', 'the batch')
    .option('--cancelled', 'also retry its cancelled jobs')
    .option('--wait', 'run (or wait for) the retried jobs; exit 1 if any ends in error again')
    .option('--json', 'the retried jobs as JSON')
    .exitOverride()
    .action((options: { batch: string; cancelled?: boolean; wait?: boolean; json?: boolean }) =>
      act(async (context) => (await import('./retry.js')).retryCommand(context, options)),
    );

  program
    .command('serve')
    .description(
      'the loopback API and status page on 127.0.0.1, with workers, until SIGINT/SIGTERM',
    )
    .addOption(
      new Option('--port <n>', 'the port (0: any free one)')
        .default(8700)
        .argParser(intIn('--port', 0, 65_535)),
    )
    .addOption(new Option('--host <address>', 'only 127.0.0.1 is accepted').default('127.0.0.1'))
    .addOption(
      new Option('--grace <seconds>', 'how long running jobs may finish after the first signal')
        .default(30)
        .argParser(intIn('--grace', 0, 86_400)),
    )
    .exitOverride()
    .action((options: { port: number; host: string; grace: number }) =>
      act(async (context) =>
        (await import('./serve.js')).serveCommand(context, {
          port: options.port,
          host: options.host,
          graceSeconds: options.grace,
        }),
      ),
    );

  const database = program.command('db').description('the job database').exitOverride();
  database
    .command('migrate')
    .description('bring the job database (SQLite, or the one --db names) up to date, and exit')
    .exitOverride()
    .action(() => act(async (context) => (await import('./db.js')).migrateCommand(context)));

  program
    .command('worker')
    .description('run jobs until SIGINT/SIGTERM, then drain')
    .addOption(
      new Option('--grace <seconds>', 'how long running jobs may finish after the first signal')
        .default(30)
        .argParser(intIn('--grace', 0, 86_400)),
    )
    .exitOverride()
    .action((options: { grace: number }) =>
      act(async (context) =>
        (await import('./worker.js')).workerCommand(context, { graceSeconds: options.grace }),
      ),
    );

  program
    .command('prune')
    .description(
      "remove this home's workspace templates and those of gone homes (remade when a job needs one)",
    )
    .addOption(
      new Option('--keep <n>', 'keep the n most recently made')
        .default(0)
        .argParser(intIn('--keep', 0, 1000)),
    )
    .option(
      '--images',
      'instead, remove the images Proctor pulled that no queued or running job needs',
    )
    .option('--json', 'machine-readable output')
    .exitOverride()
    .action((options: { keep: number; json?: boolean; images?: boolean }) =>
      act(async (context) => (await import('./prune.js')).pruneCommand(context, options)),
    );

  addDocLinks(program, '');
  return program;
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let code = 0;
  // Which command commander is parsing, and whether its action has started: an error before
  // that is about how the command was called, so it points at the command's help.
  const parsing: { command?: string; acting?: boolean } = {};
  const run = async (action: () => Promise<number>) => {
    parsing.acting = true;
    code = await action();
  };
  const program = buildProgram(io, run, parsing);
  const usage = (message: string) => {
    io.err(`proctor: ${message}`);
    io.err(`see: proctor ${parsing.command === undefined ? '' : `${parsing.command} `}--help`);
    return EXIT_USAGE;
  };
  try {
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander reports is usage, worded
      // `error: unknown option '--bogus'`, perhaps with a `(Did you mean …?)` line: one line.
      if (error.exitCode === 0) return 0;
      return usage(
        error.message
          .replace(/^error: /, '')
          .split('\n')
          .join(' '),
      );
    }
    if (error instanceof ProctorError) {
      if (error.code === 'USAGE' && !parsing.acting) return usage(error.message);
      io.err(`proctor: ${error.message}`);
      return EXIT_USAGE;
    }
    io.err(`proctor: internal error: ${describeError(error)}`);
    return EXIT_USAGE;
  }
}
