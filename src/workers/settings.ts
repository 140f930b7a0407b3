// From proctor.toml to worker pool options: slots per kind (baseline, grade, solve and
// validate; see loadConfig for their defaults), lease and retention.
import type { ProctorConfig } from '../config.js';
import type { WorkerPoolOptions } from './pool.js';

export type PoolSettings = Pick<WorkerPoolOptions, 'concurrency' | 'leaseMs' | 'retentionMs'>;

export function poolSettings(config: Pick<ProctorConfig, 'workers' | 'queue'>): PoolSettings {
  return {
    concurrency: { ...config.workers },
    leaseMs: config.queue.lease_seconds * 1000,
    retentionMs: Math.round(config.queue.retention_days * 24 * 60 * 60 * 1000),
  };
}
