// How far a pull has come, from the engine's JSON progress events: bytes downloaded of the
// bytes known (each layer's size is known once its download starts), the rate since the pull
// began, and the time left at that rate. Pure, so that it is tested without a registry.

export interface PullProgress {
  /** The reference being pulled. */
  image: string;
  /** Bytes downloaded so far, over every layer. */
  bytes: number;
  /** The layers' sizes as far as known (a layer's once its download starts); null before. */
  totalBytes: number | null;
  /** Layers done (downloaded or already present) of the layers announced. */
  layersDone: number;
  layers: number;
  /** Bytes per second since the pull began; null before a second has passed with bytes. */
  bytesPerSecond: number | null;
  /** Seconds left at that rate; null when unknown. */
  etaSeconds: number | null;
  startedAt: number;
  updatedAt: number;
}

interface Layer {
  current: number;
  total: number | null;
  done: boolean;
}

export interface PullTracker {
  /** Takes one event of the pull's stream; true when it changed the figures. */
  event(event: Record<string, unknown>): boolean;
  snapshot(): PullProgress;
}

const LAYER = new Set([
  'Pulling fs layer',
  'Waiting',
  'Downloading',
  'Verifying Checksum',
  'Download complete',
  'Extracting',
  'Pull complete',
  'Already exists',
]);
const DONE = new Set(['Download complete', 'Pull complete', 'Already exists', 'Extracting']);

export function createPullTracker(image: string, now: () => number): PullTracker {
  const startedAt = now();
  const layers = new Map<string, Layer>();
  return {
    event(event) {
      const id = event['id'];
      const status = event['status'];
      // `Pulling from NAME` and the digest and status lines carry an id that is not a layer's.
      if (typeof id !== 'string' || typeof status !== 'string' || !LAYER.has(status)) return false;
      const layer = layers.get(id) ?? { current: 0, total: null, done: false };
      layers.set(id, layer);
      const detail = event['progressDetail'] as { current?: unknown; total?: unknown } | undefined;
      if (status === 'Downloading' && detail) {
        if (typeof detail.current === 'number') layer.current = detail.current;
        if (typeof detail.total === 'number' && detail.total > 0) layer.total = detail.total;
        return true;
      }
      if (DONE.has(status) && !layer.done) {
        layer.done = true;
        // A layer already on this engine was not downloaded: it adds nothing to either figure.
        if (status !== 'Already exists' && layer.total !== null) layer.current = layer.total;
        return true;
      }
      return status === 'Pulling fs layer' || status === 'Waiting';
    },
    snapshot() {
      const at = now();
      let bytes = 0;
      let total = 0;
      let known = false;
      let done = 0;
      for (const layer of layers.values()) {
        bytes += layer.current;
        if (layer.total !== null) {
          total += layer.total;
          known = true;
        }
        if (layer.done) done += 1;
      }
      const seconds = (at - startedAt) / 1000;
      const rate = seconds >= 1 && bytes > 0 ? bytes / seconds : null;
      const left = known ? Math.max(0, total - bytes) : null;
      return {
        image,
        bytes,
        totalBytes: known ? total : null,
        layersDone: done,
        layers: layers.size,
        bytesPerSecond: rate,
        etaSeconds: left === null ? null : left === 0 ? 0 : rate ? Math.round(left / rate) : null,
        startedAt,
        updatedAt: at,
      };
    },
  };
}

/** `12.3 MB of 40.0 MB, 5.1 MB/s, ETA 6s`, for a status line. */
export function formatPullProgress(p: PullProgress): string {
  const mb = (n: number) => `${(n / 1_000_000).toFixed(1)} MB`;
  const of = p.totalBytes === null ? '' : ` of ${mb(p.totalBytes)}`;
  const rate = p.bytesPerSecond === null ? '? MB/s' : `${mb(p.bytesPerSecond)}/s`;
  const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`;
  return `${mb(p.bytes)}${of}, ${rate}, ETA ${eta} (layers ${p.layersDone}/${p.layers})`;
}

/**
 * A pull's progress as a job records it (JobStore.setProgress), and as `status`, `--wait`
 * and the page read it back: `kind` says what the job is waiting on.
 */
export interface PullProgressDocument extends PullProgress {
  kind: 'pull';
}

export function progressDocument(p: PullProgress): PullProgressDocument {
  return { kind: 'pull', ...p };
}

const count = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const countOrNull = (v: unknown) => v === null || count(v);

/** A recorded document read back, or undefined when it is not a pull's (or is malformed). */
export function readProgressDocument(text: string): PullProgressDocument | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const d = raw as Record<string, unknown> | null;
  if (
    d === null ||
    typeof d !== 'object' ||
    d['kind'] !== 'pull' ||
    typeof d['image'] !== 'string' ||
    !count(d['bytes']) ||
    !countOrNull(d['totalBytes']) ||
    !count(d['layersDone']) ||
    !count(d['layers']) ||
    !countOrNull(d['bytesPerSecond']) ||
    !countOrNull(d['etaSeconds']) ||
    !count(d['startedAt']) ||
    !count(d['updatedAt'])
  ) {
    return undefined;
  }
  return d as unknown as PullProgressDocument;
}
