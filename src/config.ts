// Proctor's configuration: where its home is, and `<home>/proctor.toml`. This is the only
// module that reads process.env; everything else receives what it needs from here.
//
// Every key of proctor.toml is optional and unknown keys are errors:
//
//   tasks_root = "."                # the API enqueues bundles under this folder only
//   [workers]                       # slots per job kind; default from cores and memory
//   baseline = 2
//   grade = 2
//   solve = 2
//   validate = 2                    # bundle checks (image, HEAD); default 2, or 1 on a small host
//   pulls = 2                       # image pulls at once in one worker process; default 2
//   [worker]
//   host = "gpu-box-1"              # this host's identity (labels, lease owners); default: hostname
//   [queue]
//   lease_seconds = 60              # a worker that stops heartbeating loses its jobs after this
//   max_attempts = 3                # tries per job, crashes included
//   synchronous = "full"            # or "normal": faster, but an OS crash may lose the last commits
//   retention_days = 0              # prune finished jobs older than this; 0 keeps them forever
//   url = "postgres://…"            # a shared PostgreSQL instead of <home>/proctor.db (see --db)
//   [sandbox]
//   runtime = "runc"                # or "runsc" (gVisor) where installed
//   uid = 1000
//   gid = 1000
//   templates = 8                   # workspace templates kept (least recently used go first)
//   [images]
//   max_gb = 200                    # disk budget of the images pulled or built for tasks (least
//                                   # recently used go first, never one a queued or running job
//                                   # needs); default none
//   timeout_minutes = 15            # wall time of one image build or pull; default 15
//   [build]
//   ca_bundle = "certs/all.pem"     # the CA bundle every environment build trusts (relative to
//                                   # the home); false offers none; default: the host's own
//                                   # (SSL_CERT_FILE and NODE_EXTRA_CA_CERTS), see buildTrust
//   [solvers.NAME]                  # a registered solver profile (see docs/solvers.md)
//   price_input_per_mtok = 2.0      # USD per million tokens: input and output together, or
//   price_output_per_mtok = 8.0     # neither; cached input defaults to the input price
//   price_cached_input_per_mtok = 0.5
import { lstatSync, readFileSync, realpathSync, statSync, statfsSync } from 'node:fs';
import { cpus, hostname, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { tomlProblem, zodProblems } from './problems.js';
import { z } from 'zod';
import { ProctorError } from './errors.js';

export const CONFIG_FILE = 'proctor.toml';
/** The only kind of database URL Proctor takes; without one, SQLite in the home. */
const POSTGRES_URL = /^postgres(ql)?:\/\/[^\s]*$/i;
export const DB_FILE = 'proctor.db';

const slots = z.number().int().min(1).max(256);

/** The pulled images' disk budget: a positive, finite number of GB (10^9 bytes). */
const MAX_GB = 'must be a number of GB greater than 0 and at most 1000000';
/** One image build or pull's wall time: minutes above 0, at most a day. */
const TIMEOUT_MINUTES = 'must be a number of minutes greater than 0 and at most 1440';
/** Without `[images] timeout_minutes`: a build of an installed project's image fits here. */
export const DEFAULT_IMAGE_TIMEOUT_MINUTES = 15;

/** The sandbox user's uid and gid unless `[sandbox]` says otherwise. */
export const DEFAULT_SANDBOX_ID = 1000;

/**
 * A host identity: it names the host in every container's `proctor.host` label and starts
 * every lease owner id (`<host>/<pid>/<random>`), so it holds no `/`.
 */
const HOST = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const HOST_RULE =
  "must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** USD per million tokens: finite and >= 0 (TOML's inf and nan are refused). */
const PRICE = 'must be a finite number of USD per million tokens, from 0 to 1000000';
const price = z.number({ error: PRICE }).min(0, PRICE).max(1_000_000, PRICE).optional();

const solverSchema = z
  .object({
    adapter: z.enum(['flat', 'codex', 'agent']),
    /**
     * With adapter "agent": the agent definition, a built-in's name (agents/NAME.toml) or the
     * path of a definition file (relative to the home). `--agent` gives it per solve.
     */
    agent: z.string().min(1).max(4096).optional(),
    base_url: z.url(),
    model: z.string().min(1).max(200),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    max_turns: z.number().int().min(1).max(10_000).default(50),
    max_tool_calls: z.number().int().min(1).max(100_000).default(100),
    max_tokens: z.number().int().min(1).default(2_000_000),
    price_input_per_mtok: price,
    price_cached_input_per_mtok: price,
    price_output_per_mtok: price,
  })
  .strict()
  .superRefine((profile, context) => {
    if (profile.adapter === 'agent' && profile.agent === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['agent'],
        message: 'must name an agent (a built-in or a definition file) with adapter "agent"',
      });
    }
    // One price alone would make every cost an undercount, so input and output go together.
    const input = profile.price_input_per_mtok !== undefined;
    const output = profile.price_output_per_mtok !== undefined;
    const cached = profile.price_cached_input_per_mtok !== undefined;
    if (input !== output || (cached && !input)) {
      const missing = input ? 'price_output_per_mtok' : 'price_input_per_mtok';
      context.addIssue({
        code: 'custom',
        path: [missing],
        message: `must be set with ${input ? 'price_input_per_mtok' : output ? 'price_output_per_mtok' : 'price_cached_input_per_mtok'} (prices are input and output together, or none)`,
      });
    }
  });

const fileSchema = z
  .object({
    tasks_root: z.string().min(1).default('.'),
    workers: z
      .object({
        baseline: slots.optional(),
        grade: slots.optional(),
        solve: slots.optional(),
        validate: slots.optional(),
        pulls: slots.optional(),
      })
      .strict()
      .default({}),
    worker: z
      .object({ host: z.string().regex(HOST, HOST_RULE).optional() })
      .strict()
      .default({}),
    queue: z
      .object({
        lease_seconds: z.number().int().min(5).max(3600).default(60),
        max_attempts: z.number().int().min(1).max(100).default(3),
        synchronous: z.enum(['full', 'normal']).default('full'),
        retention_days: z.number().min(0).default(0),
        url: z
          .string()
          .max(2048)
          .regex(POSTGRES_URL, 'must be a postgres:// or postgresql:// URL')
          .optional(),
      })
      .strict()
      .default({ lease_seconds: 60, max_attempts: 3, synchronous: 'full', retention_days: 0 }),
    sandbox: z
      .object({
        runtime: z
          .string()
          .regex(/^[a-z0-9][a-z0-9._-]*$/)
          .default('runc'),
        uid: z
          .number()
          .int()
          .min(1)
          .max(2 ** 31 - 1)
          .default(DEFAULT_SANDBOX_ID),
        gid: z
          .number()
          .int()
          .min(1)
          .max(2 ** 31 - 1)
          .default(DEFAULT_SANDBOX_ID),
        templates: z.number().int().min(1).max(1000).default(8),
      })
      .strict()
      .default({
        runtime: 'runc',
        uid: DEFAULT_SANDBOX_ID,
        gid: DEFAULT_SANDBOX_ID,
        templates: 8,
      }),
    images: z
      .object({
        max_gb: z.number({ error: MAX_GB }).gt(0, MAX_GB).max(1_000_000, MAX_GB).optional(),
        timeout_minutes: z
          .number({ error: TIMEOUT_MINUTES })
          .gt(0, TIMEOUT_MINUTES)
          .max(1440, TIMEOUT_MINUTES)
          .optional(),
      })
      .strict()
      .default({}),
    build: z
      .object({ ca_bundle: z.union([z.string().min(1).max(4096), z.literal(false)]).optional() })
      .strict()
      .default({}),
    solvers: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/), solverSchema).default({}),
  })
  .strict();

export type SolverProfile = z.output<typeof solverSchema>;

export interface ProctorConfig {
  home: string;
  dbPath: string;
  /**
   * A PostgreSQL URL when one is named (`--db`, else $PROCTOR_DB, else `[queue] url`): then
   * the queue lives there, shared by every host that names it. Undefined: SQLite at dbPath.
   */
  dbUrl: string | undefined;
  /**
   * This host's identity: $PROCTOR_HOST, else `[worker] host`, else the machine's hostname.
   * Labels every container and volume (`proctor.host`) and starts every lease owner id, so
   * that each host's reaper removes only its own, and hosts that share a machine or an engine
   * (network namespaces) are told apart.
   */
  host: string;
  tasksRoot: string;
  workers: { baseline: number; grade: number; solve: number; validate: number; pulls: number };
  queue: z.output<typeof fileSchema>['queue'];
  sandbox: z.output<typeof fileSchema>['sandbox'];
  build: z.output<typeof fileSchema>['build'];
  /**
   * `[images] max_gb` in bytes: the disk budget of the images Proctor pulled, or undefined
   * for none (they are kept until `proctor prune --images`); `[images] timeout_minutes` in ms:
   * the wall time of one build or pull.
   */
  images: { maxBytes: number | undefined; timeoutMs: number };
  solvers: Record<string, SolverProfile>;
}

/**
 * How to reach the Docker engine: DOCKER_HOST when set (unix:// or tcp://), else the default
 * socket. Read here so that nothing else touches process.env.
 */
export function dockerHost(): string | undefined {
  const host = process.env['DOCKER_HOST'];
  return host === undefined || host.trim() === '' ? undefined : host;
}

/**
 * How an agent layer's build reaches the npm registry (src/agents/layer.ts): the registry
 * (`npm_config_registry`, default npm's own) and the extra certificate authorities Node is told
 * of (`NODE_EXTRA_CA_CERTS`: a host behind a TLS-inspecting proxy trusts its CA this way, and
 * the build container, which has no CA of its own, must too). Read here so that nothing else
 * touches process.env.
 */
export function npmBuildSettings(): { registry?: string; extraCaCerts?: string } {
  const registry = process.env['npm_config_registry']?.trim();
  const extraCaCerts = process.env['NODE_EXTRA_CA_CERTS']?.trim();
  return {
    ...(registry ? { registry } : {}),
    ...(extraCaCerts ? { extraCaCerts } : {}),
  };
}

/** Where Debian, Ubuntu and Alpine keep the system's CA bundle (update-ca-certificates). */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const PROXY_NAMES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'FTP_PROXY'] as const;

/**
 * What every environment build is offered (src/sandbox/build-trust.ts): the CA bundle its
 * tools verify against, and the host's proxy variables (either case). The bundle is
 * `[build] ca_bundle` (a path relative to the home; false: none); by default the host's own:
 * SSL_CERT_FILE, with NODE_EXTRA_CA_CERTS added (to the system bundle when SSL_CERT_FILE is
 * unset), or none when the host sets neither. Its tools use the bundle instead of their own
 * list, so it must hold every CA they need, public ones included. An unreadable bundle throws
 * one line naming the file and where it came from. Read here so that nothing else touches
 * process.env.
 */
export function buildTrust(config: Pick<ProctorConfig, 'home' | 'build'>): {
  caBundle?: Buffer;
  proxy?: Record<string, string>;
} {
  const env = (name: string) => {
    const value = process.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const read = (path: string, source: string) => {
    try {
      return readFileSync(path);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ProctorError(
        'CONFIG_INVALID',
        `${source}: cannot read the CA bundle ${path}: ${why}`,
      );
    }
  };
  let caBundle: Buffer | undefined;
  const setting = config.build.ca_bundle;
  if (typeof setting === 'string') {
    caBundle = read(
      resolve(config.home, setting),
      `${join(config.home, CONFIG_FILE)}: key \`build.ca_bundle\``,
    );
  } else if (setting === undefined) {
    const file = env('SSL_CERT_FILE');
    const extra = env('NODE_EXTRA_CA_CERTS');
    const parts: Buffer[] = [];
    if (file !== undefined) parts.push(read(file, 'SSL_CERT_FILE'));
    else if (extra !== undefined) parts.push(read(SYSTEM_CA_BUNDLE, 'the system CA bundle'));
    if (extra !== undefined && extra !== file) parts.push(read(extra, 'NODE_EXTRA_CA_CERTS'));
    if (parts.length > 0)
      caBundle = Buffer.concat(parts.flatMap((part) => [part, Buffer.from('\n')]));
  }
  const proxy: Record<string, string> = {};
  for (const name of PROXY_NAMES) {
    for (const variant of [name, name.toLowerCase()]) {
      const value = env(variant);
      if (value !== undefined) proxy[variant] = value;
    }
  }
  return {
    ...(caBundle !== undefined ? { caBundle } : {}),
    ...(Object.keys(proxy).length > 0 ? { proxy } : {}),
  };
}

/**
 * The values of the variables solver profiles name in `api_key_env`: what redaction masks
 * wherever it appears. Read here so that nothing else touches process.env.
 */
export function knownSecrets(config: Pick<ProctorConfig, 'solvers'>): string[] {
  const names = new Set([
    ...COMMON_KEY_VARIABLES,
    ...Object.values(config.solvers).map((profile) => profile.api_key_env),
  ]);
  return [...names]
    .map((name) => process.env[name])
    .filter((value): value is string => value !== undefined && value !== '');
}

/** The key of a solver profile, from the variable it names; undefined when unset or empty. */
export function solverKey(profile: Pick<SolverProfile, 'api_key_env'>): string | undefined {
  const value = process.env[profile.api_key_env];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A profile's token prices in USD per million tokens, or null when it sets none; cached input
 * costs the input price unless the profile names its own.
 */
export function solverPrices(
  profile: SolverProfile,
): { input: number; cachedInput: number; output: number } | null {
  const input = profile.price_input_per_mtok;
  const output = profile.price_output_per_mtok;
  if (input === undefined || output === undefined) return null;
  return { input, cachedInput: profile.price_cached_input_per_mtok ?? input, output };
}

/** Provider keys masked even when no profile names them. */
const COMMON_KEY_VARIABLES = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'CODEX_API_KEY'];

/** `--home`, else $PROCTOR_HOME, else ./.proctor — as an absolute path. */
export function resolveHome(flag: string | undefined, cwd = process.cwd()): string {
  const chosen = flag ?? process.env['PROCTOR_HOME'] ?? '.proctor';
  if (chosen.trim() === '') throw new ProctorError('USAGE', '--home must not be empty');
  return resolve(cwd, chosen);
}

/** Where the kernel's pseudo-filesystems are mounted: no place for a database. */
const PSEUDO_ROOTS = ['/proc', '/sys', '/dev'];

/**
 * statfs f_type of pseudo-filesystems (linux/magic.h) mounted elsewhere: proc, sysfs, devpts,
 * cgroup and cgroup2, debugfs, tracefs, securityfs, selinuxfs, smackfs, bpf, pstore, configfs,
 * efivarfs, binfmt_misc, fusectl, mqueue, hugetlbfs, nsfs, autofs, resctrl.
 */
const PSEUDO_FS_TYPES = new Set([
  0x9fa0, 0x62656572, 0x1cd1, 0x27e0eb, 0x63677270, 0x64626720, 0x74726163, 0x73636673, 0xf97cff8c,
  0x43415d53, 0xcafe4a11, 0x6165676c, 0x62656570, 0xde5e81e4, 0x42494e4d, 0x65735543, 0x19800202,
  0x958458f6, 0x6e736673, 0x0187, 0x7655821,
]);

const under = (path: string, root: string) => path === root || path.startsWith(`${root}/`);

/**
 * Refuses, at once, a home that cannot hold a database: one under /proc, /sys or /dev (also
 * through a symlink), or one whose nearest existing folder is not a directory on a regular
 * filesystem. Node's recursive mkdir loops forever under /proc, so this runs before anything
 * tries to create the home.
 */
export function checkHome(home: string): void {
  const refuse = (why: string) => new ProctorError('CONFIG_INVALID', `home ${home}${why}`);
  const pseudo = (path: string) => PSEUDO_ROOTS.find((root) => under(path, root));
  const root = pseudo(home);
  if (root !== undefined) {
    throw refuse(`: under ${root}, a pseudo-filesystem; choose a folder on a regular filesystem`);
  }
  let existing = home;
  for (;;) {
    try {
      lstatSync(existing);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        throw refuse(`: cannot inspect ${existing}: ${code ?? String(error)}`);
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  let real: string;
  try {
    real = realpathSync(existing);
    if (!statSync(real).isDirectory()) {
      throw refuse(existing === home ? ' is not a directory' : `: ${existing} is not a directory`);
    }
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw refuse(`: cannot inspect ${existing}: ${code ?? String(error)}`);
  }
  const realRoot = pseudo(real);
  if (realRoot !== undefined) {
    throw refuse(`: ${existing} is ${real}, under ${realRoot}, a pseudo-filesystem`);
  }
  const type = Number(statfsSync(real).type) >>> 0;
  if (PSEUDO_FS_TYPES.has(type)) {
    throw refuse(`: ${existing} is on a pseudo-filesystem (type 0x${type.toString(16)})`);
  }
}

/**
 * Container slots per kind when the config names none: one per core, and no more than
 * memory allows at the default 2 GiB per task container, leaving a quarter for the host.
 */
export function defaultSlots(cores = cpus().length, memoryBytes = totalmem()): number {
  const byMemory = Math.floor((memoryBytes * 0.75) / (2 * 1024 ** 3));
  return Math.max(1, Math.min(cores, byMemory));
}

/**
 * Validate slots when the config names none: a validate job is a short probe container, but
 * it may build or pull an image, which is the heavy part; two at a time keep a suite's checks
 * moving without starving baselines and grades of cores.
 */
export function validateSlots(slots = defaultSlots()): number {
  return Math.min(2, slots);
}

export interface ConfigOverrides {
  /** `--db`: a postgres:// URL; wins over $PROCTOR_DB and `[queue] url`. */
  db?: string;
}

/** The database URL to use, checked; never echoed, since it may carry a password. */
function chooseDbUrl(flag: string | undefined, fromFile: string | undefined): string | undefined {
  const env = process.env['PROCTOR_DB'];
  const [source, value] =
    flag !== undefined
      ? ['--db', flag]
      : env !== undefined && env !== ''
        ? ['PROCTOR_DB', env]
        : ['[queue] url', fromFile];
  if (value === undefined) return undefined;
  if (!POSTGRES_URL.test(value) || value.length > 2048) {
    throw new ProctorError(
      source === '--db' ? 'USAGE' : 'CONFIG_INVALID',
      `${source}: must be a postgres:// or postgresql:// URL (SQLite needs none: it is the default)`,
    );
  }
  return value;
}

/**
 * The machine's hostname as a host identity: any character one cannot hold made `-`. The
 * default of ProctorConfig.host, and of everything that labels or names owners without it.
 */
export function machineHost(): string {
  const name = hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 63);
  return name === '' ? 'localhost' : name;
}

/**
 * The host identity: $PROCTOR_HOST (checked), else `[worker] host` (checked by the schema),
 * else machineHost().
 */
function chooseHost(fromFile: string | undefined): string {
  const env = process.env['PROCTOR_HOST'];
  if (env !== undefined && env !== '') {
    if (!HOST.test(env)) throw new ProctorError('CONFIG_INVALID', `PROCTOR_HOST: ${HOST_RULE}`);
    return env;
  }
  return fromFile ?? machineHost();
}

export function loadConfig(home: string, overrides: ConfigOverrides = {}): ProctorConfig {
  checkHome(home);
  const file = join(home, CONFIG_FILE);
  let raw: unknown = {};
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') {
      throw new ProctorError('CONFIG_INVALID', `home ${home} is not a directory`);
    }
    if (code !== 'ENOENT') {
      throw new ProctorError('CONFIG_INVALID', `${file}: cannot read: ${code ?? String(error)}`);
    }
  }
  if (text !== undefined) {
    try {
      raw = parseToml(text);
    } catch (error) {
      throw new ProctorError('CONFIG_INVALID', `${file}: ${tomlProblem(error)}`);
    }
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const { key, message } = zodProblems(parsed.error)[0] ?? { key: '', message: 'invalid' };
    const detail =
      message === 'unknown key' ? `unknown key \`${key}\`` : `key \`${key}\`: ${message}`;
    throw new ProctorError('CONFIG_INVALID', `${file}: ${detail}`);
  }
  const c = parsed.data;
  const slotsDefault = defaultSlots();
  return {
    home,
    dbPath: join(home, DB_FILE),
    dbUrl: chooseDbUrl(overrides.db, c.queue.url),
    host: chooseHost(c.worker.host),
    tasksRoot: resolve(home, '..', c.tasks_root),
    workers: {
      baseline: c.workers.baseline ?? slotsDefault,
      grade: c.workers.grade ?? slotsDefault,
      solve: c.workers.solve ?? slotsDefault,
      validate: c.workers.validate ?? validateSlots(slotsDefault),
      pulls: c.workers.pulls ?? 2,
    },
    queue: c.queue,
    sandbox: c.sandbox,
    build: c.build,
    images: {
      maxBytes: c.images.max_gb === undefined ? undefined : Math.round(c.images.max_gb * 1e9),
      timeoutMs: Math.round((c.images.timeout_minutes ?? DEFAULT_IMAGE_TIMEOUT_MINUTES) * 60_000),
    },
    solvers: c.solvers,
  };
}
