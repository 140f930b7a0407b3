// A registry's answer about an image, without pulling it: the engine's distribution endpoint
// (GET /distribution/{name}/json) asks the registry for the manifest of `name` and returns its
// digest, so that a tag can be pinned to the bytes it names today. A registry's refusal (no
// such repository or tag, access denied) is one line naming the image and what the registry
// said (IMAGE_INVALID); a registry that throttles us or cannot be reached is the machine's
// condition (DOCKER_ERROR, retryable); an engine that does not answer is DOCKER_UNAVAILABLE.
import { ProctorError, describeError } from '../errors.js';
import { dockerFailure } from './daemon.js';
import type { DockerClient } from './docker.js';
import { parseImageReference } from './image-reference.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The one line of the registry's answer in a failed engine call, without dockerode's prefix. */
export function registryAnswer(error: unknown): string {
  const json = (error as { json?: unknown } | null)?.json;
  const message =
    json && typeof json === 'object' && typeof (json as { message?: unknown }).message === 'string'
      ? (json as { message: string }).message
      : describeError(error).replace(/^\(HTTP code \d+\)[^-]*- /, '');
  return message.replace(/\s+/g, ' ').trim().slice(0, 500);
}

/** Whether a registry's answer says it throttles us (Docker Hub's `toomanyrequests`). */
export function isRateLimited(answer: string): boolean {
  return /toomanyrequests|rate limit|\b429\b/i.test(answer);
}

/**
 * Whether a registry's answer refuses us: no credentials for it, wrong ones, or no access
 * (Docker's `no basic auth credentials` for a registry that asks for a login, `denied`,
 * `unauthorized: authentication required`).
 */
export function isRefused(answer: string): boolean {
  return /denied|unauthorized|forbidden|no basic auth credentials|authentication required/i.test(
    answer,
  );
}

/** Whether the answer is that no registry could be reached: the network's fault, not the name's. */
export function isUnreachable(answer: string): boolean {
  return /connection refused|no such host|i\/o timeout|network is unreachable|TLS handshake|connection reset|\bEOF\b/i.test(
    answer,
  );
}

/**
 * The manifest digest `name` (`repository[:tag]`, `:latest` when it has none) has in its
 * registry now, and the pinned reference `repository:tag@digest`.
 */
export async function resolveDigest(
  docker: DockerClient,
  name: string,
): Promise<{ digest: string; reference: string }> {
  const at = name.lastIndexOf(':');
  const tagged = at > name.lastIndexOf('/') ? name : `${name}:latest`;
  // The grammar check of a pinned reference, with a placeholder digest.
  parseImageReference(`${tagged}@sha256:${'0'.repeat(64)}`);
  let info;
  try {
    info = await docker.getImage(tagged).distribution();
  } catch (error) {
    const code = (error as { statusCode?: unknown } | null)?.statusCode;
    if (typeof code !== 'number') throw dockerFailure(error, `asking the registry for ${tagged}`);
    const answer = registryAnswer(error);
    if (isRateLimited(answer)) {
      throw new ProctorError(
        'DOCKER_ERROR',
        `image ${tagged}: the registry is rate-limiting: ${answer}`,
      );
    }
    if (isUnreachable(answer)) {
      throw new ProctorError(
        'DOCKER_ERROR',
        `image ${tagged}: the registry cannot be reached: ${answer}`,
      );
    }
    throw new ProctorError('IMAGE_INVALID', `image ${tagged}: the registry refused: ${answer}`, {
      data: { image: tagged, answer },
    });
  }
  const digest = info.Descriptor?.digest;
  if (typeof digest !== 'string' || !DIGEST.test(digest)) {
    throw new ProctorError(
      'IMAGE_INVALID',
      `image ${tagged}: the registry answered no sha256 manifest digest (${JSON.stringify(digest)})`,
    );
  }
  return { digest, reference: `${tagged}@${digest}` };
}
