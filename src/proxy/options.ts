// The model proxy's options: what a solve gives it, their defaults, and the checks that refuse
// a bad one at start, in one line that never quotes the key.
import { ProctorError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Deadline } from '../solvers/deadline.js';
import type { SolveMeter, TokenPrices } from '../solvers/usage.js';
import type { ProxyLimits, SharedCost } from './budget.js';
import type { Upstream } from './exchange.js';
import type { WireProtocol } from './protocols.js';
import type { ProxyStop } from './trajectory.js';

/** The socket's name in its folder. */
export const SOCKET_NAME = 'model.sock';
/** Request bodies above this are refused with 413. */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** The longest the provider may stay silent (before its answer, or between its bytes). */
export const DEFAULT_UPSTREAM_IDLE_MS = 300_000;
/** A Unix socket path longer than this cannot be bound (sun_path, with its NUL). */
export const MAX_SOCKET_PATH = 107;

export interface ModelProxyOptions {
  /**
   * A folder for this proxy alone, bind-mounted into the sandbox; created if missing. The proxy
   * binds `model.sock` in it, makes the folder 0711 and the socket 0666 so that the sandbox's
   * non-root user can connect: the token, not the file mode, is what admits a request.
   */
  socketDir: string;
  upstream: Upstream & {
    /** Replaces the model every request names. Default: the agent's own choice. */
    model?: string;
  };
  /** The protocols served; others get 404. Default: all four (WIRE_PROTOCOLS). */
  protocols?: readonly WireProtocol[];
  limits?: ProxyLimits;
  /** A cost cap shared with other solves (the batch's); needs prices. Default: none. */
  sharedCost?: SharedCost;
  /** USD per million tokens; null when the profile has none (cost is then unknown). */
  prices?: TokenPrices | null;
  /** The solve's deadline: past it every request is refused and in-flight ones are cut. */
  deadline: Deadline;
  /** Also charged with every answer (the solve's meter), if given. */
  meter?: SolveMeter;
  logger?: Logger;
  /** The run-scoped token. Default: 32 random bytes, hex. */
  token?: string;
  /** Default DEFAULT_MAX_REQUEST_BYTES (32 MiB). */
  maxRequestBytes?: number;
  /** Default DEFAULT_UPSTREAM_IDLE_MS (300 s). */
  upstreamIdleMs?: number;
  /** Called once, with the solve's stop, when the first limit is passed or the deadline. */
  onStop?: (stop: ProxyStop) => void;
}

export function invalid(message: string): ProctorError {
  return new ProctorError('USAGE', `model proxy: ${message}`);
}

export function checkOptions(options: ModelProxyOptions): void {
  const { upstream, limits = {} } = options;
  let base: URL;
  try {
    base = new URL(upstream.baseUrl);
  } catch {
    throw invalid(`upstream base URL ${JSON.stringify(upstream.baseUrl)} is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw invalid(`upstream base URL must be http or https, got ${base.protocol}`);
  }
  if (upstream.apiKey === '' || /[\s]/.test(upstream.apiKey)) {
    throw invalid('the provider key must be non-empty and hold no whitespace');
  }
  for (const [name, value] of Object.entries(limits)) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw invalid(`Expected \`${name}\` to be a finite number >= 0, got \`${String(value)}\``);
    }
  }
  for (const [name, value] of [
    ['maxRequestBytes', options.maxRequestBytes],
    ['upstreamIdleMs', options.upstreamIdleMs],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) {
      throw invalid(`Expected \`${name}\` to be an integer >= 1, got \`${String(value)}\``);
    }
  }
  if ((limits.maxCostUsd !== undefined || options.sharedCost) && !options.prices) {
    throw invalid('a cost limit needs prices (the profile sets none)');
  }
  if (options.token !== undefined && !/^[A-Za-z0-9._-]{16,256}$/.test(options.token)) {
    throw invalid('the token must be 16 to 256 letters, digits, ".", "_" or "-"');
  }
}
