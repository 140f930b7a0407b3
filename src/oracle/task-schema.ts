// task.toml, format 1 (product.md, "Task bundle, format 1"): its schema and the messages that
// name the key at fault. Loading the rest of a bundle is bundle.ts; [source] is task-source.ts.
//
// Every [limits] key is optional; the bounds below are Proctor's, chosen so that a typo (a
// memory limit in bytes, a timeout in ms) fails here rather than starving or flooding a host:
//
//   solver_seconds = 1800       10 ..= 86400      wall time of one solve
//   test_seconds = 600          1 ..= 21600       wall time of one runner invocation
//   cpus = 1.0                  0.1 ..= 64
//   memory_mb = 2048            64 ..= 262144     swap is set equal, so there is none
//   pids = 256                  16 ..= 65536
//   output_bytes = 1048576      1 KiB ..= 64 MiB  output kept per command or run
//   patch_bytes = 1048576       1 KiB ..= 64 MiB  largest candidate patch
//   candidate_files = 200       1 ..= 100000      most files a candidate may touch
import { z } from 'zod';
import { zodProblems } from '../problems.js';
import { imageReferenceProblem } from '../sandbox/image-reference.js';
import { CREDENTIAL_NAME } from '../sandbox/profile.js';
import { relativePathProblem, workdirProblem } from './bundle-paths.js';
import { impossibleSchema } from './task-impossible.js';
import { sourceSchema } from './task-source.js';

const NO_NUL = (s: string) => !s.includes('\0');

/** Variables Proctor sets itself for every runner (product.md, "The oracle", step 5). */
const RESERVED_ENV = new Set(['TZ', 'LC_ALL', 'PYTHONHASHSEED', 'SOURCE_DATE_EPOCH', 'HOME']);

function envNameProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,255}$/.test(name))
    return 'is not a valid environment variable name';
  if (RESERVED_ENV.has(name)) return `${name} is set by Proctor and cannot be overridden`;
  if (/^PROCTOR_/i.test(name)) return 'names starting with PROCTOR_ are reserved for Proctor';
  // Bundles are shared and stored; a secret in one would leak (and the sandbox refuses it).
  if (CREDENTIAL_NAME.test(name)) return 'looks like a credential; a bundle must not carry secrets';
  return undefined;
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = JSON.stringify(value);
    return shown.length > 60 ? `${shown.slice(0, 57)}…"` : shown;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  return 'a table';
}

/** A string check that reports `problem(value)` as its message. */
export const checked = (problem: (value: string) => string | undefined, max: number) =>
  z
    .string()
    .max(max)
    .superRefine((value, ctx) => {
      const message = problem(value);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message });
    });

/** An integer key with a default; "expected an integer" even when the value is no number. */
const int = (min: number, max: number, fallback: number) =>
  z
    .number({
      error: (issue) =>
        issue.code === 'invalid_type'
          ? `expected an integer, got ${describeValue(issue.input)}`
          : undefined,
    })
    .int()
    .min(min)
    .max(max)
    .default(fallback);

const glob = z.string().min(1).max(1000).refine(NO_NUL, 'must not contain NUL');

/** [environment]: where the work tree comes from, and at which commit. */
const environmentSchema = z
  .object({
    dockerfile: checked((path) => {
      const problem = relativePathProblem(path);
      if (problem !== undefined) return problem;
      return path.startsWith('environment/')
        ? undefined
        : 'must be inside environment/, the build context (normally environment/Dockerfile)';
    }, 4096).optional(),
    image: checked(imageReferenceProblem, 1000).optional(),
    workdir: checked(workdirProblem, 4096),
    base_commit: z
      .string()
      .regex(
        /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/,
        'must be a full commit id: 40 (or 64) lowercase hex digits',
      ),
    /**
     * What the solver's workspace holds of the repository's history: `full` (the default) the
     * base commit and its ancestors; `none` the base commit alone. The evaluator never gets
     * history (a tracked tree and its index).
     */
    history: z.enum(['full', 'none'], { error: 'must be "full" or "none"' }).default('full'),
    /**
     * The image is laid out as SWE-bench's harness builds it: HEAD may be one commit on top of
     * base_commit (its only parent), the commit the harness makes of its install's changes to
     * tracked files, and the work tree's untracked files are build output. The workspace is that
     * commit's tree with every untracked file of the image; capture reads changes against that
     * commit and leaves the untracked files out. Default false: HEAD must be base_commit.
     */
    setup_commit: z.boolean({ error: 'must be true or false' }).default(false),
    /**
     * Where the evaluator's workspace lives. Absent (the default): an overlay on the workspace
     * template where the engine can mount one (sandbox/overlay.ts), else a copy in memory. Set,
     * a copy: `memory` a tmpfs volume, whose tree is added to the memory limit and whose new
     * files count against it, as /tmp's do; `disk` a volume on the engine's disk, for test
     * suites that write far more than their memory into the checkout (a large build's outputs).
     */
    workspace: z.enum(['memory', 'disk'], { error: 'must be "memory" or "disk"' }).optional(),
    /**
     * A shell command run with `sh -c` in the work tree, in the image build, after the work
     * tree is made (`python3 -m pip install --no-deps --no-build-isolation -e .`): a layer of
     * its own on top of the image (src/sandbox/install.ts). What it leaves must be ignored by
     * git or outside the tree.
     */
    install: checked(
      (command) =>
        command.trim() === ''
          ? 'must be a shell command, not empty'
          : command.includes('\0')
            ? 'must not contain NUL'
            : undefined,
      16_384,
    ).optional(),
  })
  .strict();

const taskSchema = z
  .object({
    schema: z.literal(1, 'must be 1 (this is task bundle format 1)'),
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, 'must match [a-z0-9][a-z0-9._-]{0,127}'),
    environment: environmentSchema,
    grading: z
      .object({
        deny: z
          .array(glob)
          .max(200)
          .default(() => []),
        // An empty allow list would drop every candidate file: always a mistake.
        allow: z
          .array(glob)
          .min(1)
          .max(200)
          .default(() => ['**']),
        // Our decision (format 1 is silent): a candidate that adds or changes a symlink is
        // refused unless the task opts in, since a symlink can point the runner at anything.
        allow_symlinks: z.boolean().default(false),
        /**
         * What a hit of the candidate screen (screen.ts) does: `flag` (the default) records it
         * as `suspicious` and leaves the verdict alone; `fail` fails the grade with
         * TAMPER_SUSPECTED before any candidate code runs.
         */
        tamper: z.enum(['flag', 'fail'], { error: 'must be "flag" or "fail"' }).default('flag'),
        /**
         * Whose rules read the reports: `proctor` (the default: every declared ID must pass,
         * existing suite before the hidden patch) or `swebench` (SWE-bench's harness: one run
         * of both lists after the hidden patch; FAIL_TO_PASS must be PASSED or XFAIL,
         * PASS_TO_PASS may also be SKIPPED; a test SWE-bench's parser would not record fails).
         */
        rules: z
          .enum(['proctor', 'swebench'], { error: 'must be "proctor" or "swebench"' })
          .default('proctor'),
      })
      .strict()
      .prefault({}),
    tests: z
      .object({
        env: z
          .record(
            checked(envNameProblem, 256),
            z.string().max(32_768).refine(NO_NUL, 'must not contain NUL'),
          )
          .refine((env) => Object.keys(env).length <= 200, 'at most 200 variables')
          .default(() => ({})),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        solver_seconds: int(10, 86_400, 1800),
        test_seconds: int(1, 21_600, 600),
        cpus: z.number().min(0.1).max(64).default(1),
        memory_mb: int(64, 262_144, 2048),
        pids: int(16, 65_536, 256),
        output_bytes: int(1024, 64 * 1024 * 1024, 1024 * 1024),
        patch_bytes: int(1024, 64 * 1024 * 1024, 1024 * 1024),
        candidate_files: int(1, 100_000, 200),
      })
      .strict()
      .prefault({}),
    source: sourceSchema.optional(),
    impossible: impossibleSchema.optional(),
  })
  .strict();

export type TaskFile = z.output<typeof taskSchema>;

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'a table',
  record: 'a table',
};

/** Messages in the style of the rest of Proctor: "must be ≥ 64", "expected a number, got "x"". */
function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      if (issue.origin === 'array') return `must have at least ${issue.minimum} entries`;
      return `must be ≥ ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} entries`;
      return `must be ≤ ${issue.maximum}`;
    default:
      return undefined;
  }
}

/** Validates parsed task.toml, returning every problem with its key. */
export function parseTask(raw: unknown): {
  task?: TaskFile;
  problems: Array<{ key?: string; message: string }>;
} {
  const problems: Array<{ key?: string; message: string }> = [];
  const add = (key: string, message: string) =>
    problems.push(key === '' ? { message } : { key, message });
  const result = taskSchema.safeParse(raw, { error: issueMessage });
  if (result.error) for (const { key, message } of zodProblems(result.error)) add(key, message);
  // Checked on the raw table, so that it is reported even when other keys are wrong.
  const env = (raw as { environment?: unknown } | undefined)?.environment;
  if (typeof env === 'object' && env !== null && !Array.isArray(env)) {
    const has = (name: string) => Object.hasOwn(env, name);
    if (has('dockerfile') && has('image')) {
      add('environment', 'sets both `dockerfile` and `image`; set exactly one');
    } else if (!has('dockerfile') && !has('image')) {
      add('environment', 'needs exactly one of `dockerfile` or `image`');
    }
  }
  return problems.length === 0 && result.success ? { task: result.data, problems } : { problems };
}
