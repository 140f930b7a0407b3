// The one dockerode client, made from DOCKER_HOST (or the default socket) and injected into
// everything in src/sandbox/. A missing engine is a clear DOCKER_UNAVAILABLE error, never a
// stack trace.
import Docker from 'dockerode';
import { ProctorError, describeError } from '../errors.js';

export type DockerClient = Docker;

/** `host` is DOCKER_HOST's value (see config.ts dockerHost()); undefined means the default socket. */
export function createDockerClient(host?: string): DockerClient {
  if (host === undefined) return new Docker({ socketPath: '/var/run/docker.sock' });
  const url = new URL(host);
  if (url.protocol === 'unix:') return new Docker({ socketPath: url.pathname });
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:') {
    return new Docker({
      host: url.hostname,
      port: Number(url.port || 2375),
      protocol: url.protocol === 'https:' ? 'https' : 'http',
    });
  }
  throw new ProctorError(
    'DOCKER_UNAVAILABLE',
    `DOCKER_HOST=${host}: unsupported scheme ${url.protocol}`,
  );
}

export async function requireDocker(
  docker: DockerClient,
  where = 'the Docker engine',
): Promise<void> {
  try {
    await docker.ping();
  } catch (error) {
    throw new ProctorError(
      'DOCKER_UNAVAILABLE',
      `no Docker engine answers at ${where}: ${describeError(error)} (run npm run setup)`,
      { cause: error },
    );
  }
}

/** True for dockerode's "no such container/volume/image" errors. */
export function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: number } | null)?.statusCode === 404;
}

/**
 * True for dockerode's conflicts: a name taken, a volume in use, a removal already in
 * progress.
 */
export function isConflict(error: unknown): boolean {
  return (error as { statusCode?: number } | null)?.statusCode === 409;
}
