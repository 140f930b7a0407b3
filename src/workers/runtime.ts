// Everything a process that runs jobs needs, made from the configuration in one place: the
// job store, the Docker client, the artifact store behind one redactor, and a worker pool
// with the oracle's handlers. `proctor worker`, `proctor serve` and every `--wait` use it.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import {
  buildTrust,
  dockerHost,
  knownSecrets,
  npmBuildSettings,
  type ProctorConfig,
} from '../config.js';
import { createAgentLayers } from '../agents/layer.js';
import type { Logger } from '../logger.js';
import {
  openArtifactStore,
  openJobStore,
  type ClaimScope,
  type JobKind,
  type JobStore,
} from '../queue/index.js';
import {
  createDockerClient,
  createTemplateStore,
  requireDocker,
  type DockerClient,
} from '../sandbox/index.js';
import { createFileDigests, type FileDigests } from '../oracle/file-digests.js';
import { createModelCatalog } from '../solvers/codex/catalog.js';
import { createRedactor, type ArtifactStore, type Redactor } from '../store/index.js';
import { createImageCache } from './images.js';
import { createNeededImages } from './needed-images.js';
import { openPulledImages, pulledImagesDir } from '../sandbox/pulled-images.js';
import { INPUT_SWEEP_EVERY_MS, sweepInputs } from './input-sweep.js';
import { baselineHandler, gradeHandler, type OracleDeps } from './oracle-jobs.js';
import { createWorkerPool, type JobHandler, type WorkerPool } from './pool.js';
import { listenForWork } from './wakeup.js';
import { createOwnerId, isDeadLocalOwner } from './owner.js';
import { sweepPresence } from './presence.js';
import { reapGoneHomeTemplates, sandboxRecovery } from './recovery.js';
import { poolSettings } from './settings.js';
import { solveHandler } from './solve-job.js';
import { validateHandler } from './validate-job.js';

export interface Runtime {
  config: ProctorConfig;
  store: JobStore;
  redactor: Redactor;
  /** Credentials Proctor knows (provider keys): masked in text, refused in byte-exact data. */
  secrets: readonly string[];
  artifacts: ArtifactStore;
  /** File digests of bundle loads in this process (loadBundle's `digests`). */
  digests: FileDigests;
  /** Opened on first use: commands that only enqueue never need an engine. */
  docker(): Promise<DockerClient>;
  /**
   * A pool with the handlers of every kind that can run here. `handlers` adds or replaces
   * some (tests and benches run hardened no-op container jobs as `noop` this way); their
   * slots come from `concurrency`, else [workers] for the four kinds, else 1.
   */
  createPool(options?: {
    kinds?: readonly JobKind[];
    pollMs?: number;
    /** The claim loops' back-off while they find nothing (WorkerPoolOptions.idleMaxMs). */
    idleMaxMs?: number;
    handlers?: Partial<Record<JobKind, JobHandler>>;
    concurrency?: Partial<Record<JobKind, number>>;
    /** The jobs the pool may claim, read before each claim (WorkerPoolOptions.claimScope). */
    claimScope?: () => ClaimScope | undefined;
  }): Promise<WorkerPool>;
  close(): Promise<void>;
}

export function createRuntime(config: ProctorConfig, clock: Clock, logger: Logger): Runtime {
  // With the logger: a worker or server on PostgreSQL rides out a database outage.
  const store = openJobStore(config, clock, logger);
  const secrets = knownSecrets(config);
  const redactor = createRedactor({ home: homedir(), secrets });
  // Files in the home on SQLite; in the database on PostgreSQL, where every host reads them.
  const artifacts = openArtifactStore(config, store, { redactor, clock });
  // Read by the first codex solve of this runtime and shared by its pools' later ones.
  const codexCatalog = createModelCatalog();
  // Shared by every pool of this runtime, and by its own bundle loads (a --wait command's).
  const digests = createFileDigests();
  let docker: Promise<DockerClient> | undefined;
  const getDocker = () => {
    docker ??= (async () => {
      const client = createDockerClient(dockerHost());
      await requireDocker(client, dockerHost() ?? '/var/run/docker.sock');
      return client;
    })();
    return docker;
  };
  return {
    config,
    store,
    redactor,
    secrets,
    artifacts,
    digests,
    docker: getDocker,
    async createPool(options = {}) {
      const client = await getDocker();
      const sandbox = config.sandbox;
      const deps: OracleDeps = {
        docker: client,
        store,
        artifacts,
        images: createImageCache(
          client,
          { dir: join(config.home, 'cache', 'contexts'), now: () => clock.now() },
          {
            pulls: config.workers.pulls,
            trust: buildTrust(config),
            timeoutMs: config.images.timeoutMs,
            pulled: openPulledImages(pulledImagesDir(config.home)),
            ...(config.images.maxBytes !== undefined
              ? { budget: { maxBytes: config.images.maxBytes, needed: createNeededImages(store) } }
              : {}),
            now: () => clock.now(),
            onEviction: (result) => {
              for (const image of result.images.filter((i) => i.action === 'removed')) {
                logger.info('removed an image over the disk budget', {
                  image: image.reference,
                  bytes: image.sizeBytes,
                });
              }
            },
            onEvictionError: (error) =>
              logger.warn('the image record or its budget failed; jobs go on', {
                error: describeError(error),
              }),
          },
        ),
        sandbox: {
          uid: sandbox.uid,
          gid: sandbox.gid,
          ...(sandbox.runtime !== 'runc' ? { runtime: sandbox.runtime } : {}),
        },
        home: config.home,
        host: config.host,
        clock,
        // One per pool: jobs that need the same missing template wait for one preparation.
        templates: createTemplateStore({ limit: sandbox.templates }),
        digests,
      };
      const all: Partial<Record<JobKind, JobHandler>> = {
        baseline: baselineHandler(deps),
        grade: gradeHandler(deps),
        solve: solveHandler({
          ...deps,
          solvers: config.solvers,
          secrets,
          codexCatalog,
          // One per pool: solves of one agent on one image wait for one layer build.
          agentLayers: createAgentLayers(client, {
            uid: sandbox.uid,
            gid: sandbox.gid,
            ...npmBuildSettings(),
          }),
        }),
        validate: validateHandler(deps),
        ...options.handlers,
      };
      const kinds = options.kinds ?? (Object.keys(all) as JobKind[]);
      const handlers = Object.fromEntries(kinds.flatMap((k) => (all[k] ? [[k, all[k]]] : [])));
      const settings = poolSettings(config);
      const concurrency = { ...settings.concurrency, ...options.concurrency };
      // A SQLite home serves one machine, so what it made before host labels is its own.
      const scope = {
        home: config.home,
        host: config.host,
        unlabelled: config.dbUrl === undefined,
      };
      const reapSandboxes = sandboxRecovery(client, store, scope, logger);
      const pool = createWorkerPool({
        owner: createOwnerId(config.host),
        store,
        clock,
        logger,
        handlers,
        ...settings,
        concurrency,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
        ...(options.idleMaxMs !== undefined ? { idleMaxMs: options.idleMaxMs } : {}),
        ...(options.claimScope !== undefined ? { claimScope: options.claimScope } : {}),
        // A dead owner is proved by its presence lock, which outlives a reused pid.
        isOwnerDead: (owner) => isDeadLocalOwner(owner, config.home, config.host),
        recover: async () => {
          // After the start's reclaim: the dead owners still running jobs keep their files.
          sweepPresence(config.home, new Set(await store.runningOwners()), config.host);
          await reapSandboxes();
        },
        redact: redactor,
        sweep: async () => {
          await sweepInputs({ store, artifacts, clock, logger });
          await reapGoneHomeTemplates(client, scope, logger);
        },
        sweepEveryMs: INPUT_SWEEP_EVERY_MS,
        discardArtifacts: async (records) => {
          await Promise.allSettled(records.map((r) => artifacts.discard(r)));
        },
      });
      // Another host's enqueue wakes the claim loops at once (PostgreSQL's LISTEN/NOTIFY);
      // without it they find the work at their next poll.
      let unlisten: (() => Promise<void>) | undefined;
      return {
        ...pool,
        async start() {
          await pool.start();
          unlisten = await listenForWork(
            store,
            () => pool.notify(),
            (error) =>
              logger.warn('no wake-ups from the database; polling', {
                error: describeError(error),
              }),
          );
        },
        async stop(stopOptions) {
          await unlisten?.();
          await pool.stop(stopOptions);
        },
      };
    },
    close: () => store.close(),
  };
}
