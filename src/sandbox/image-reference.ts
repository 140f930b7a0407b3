// The grammar of a digest-pinned image reference, `name[:tag]@sha256:<64 hex>`. Pure (no
// Docker client), so that loading a bundle checks a reference with the same rules the sandbox
// resolves it by.
import { ProctorError } from '../errors.js';

export interface ImageReference {
  repository: string;
  tag?: string;
  digest: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const HOST = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const NAME = new RegExp(`^(?:${HOST}(?:\\.${HOST})*(?::[0-9]+)?/)?${COMPONENT}(?:/${COMPONENT})*$`);
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const TAG = /^\w[\w.-]{0,127}$/;

function split(reference: string): ImageReference | string {
  const at = reference.lastIndexOf('@');
  if (at < 0) return 'must carry a digest: name[:tag]@sha256:<64 lowercase hex>';
  const [named, digest] = [reference.slice(0, at), reference.slice(at + 1)];
  if (!DIGEST.test(digest))
    return 'malformed digest: expected name[:tag]@sha256:<64 lowercase hex>';
  const colon = named.lastIndexOf(':');
  const hasTag = colon > named.lastIndexOf('/');
  const repository = hasTag ? named.slice(0, colon) : named;
  const tag = hasTag ? named.slice(colon + 1) : undefined;
  if (repository.length > 255 || !NAME.test(repository) || (tag !== undefined && !TAG.test(tag))) {
    return 'malformed image name or tag';
  }
  return tag === undefined ? { repository, digest } : { repository, tag, digest };
}

/** What is wrong with a reference, or undefined when it is well-formed. */
export function imageReferenceProblem(reference: string): string | undefined {
  const result = split(reference);
  return typeof result === 'string' ? result : undefined;
}

/** Parses a reference; one without a digest, or malformed, is IMAGE_INVALID naming it. */
export function parseImageReference(reference: string): ImageReference {
  const result = split(reference);
  if (typeof result === 'string') {
    throw new ProctorError('IMAGE_INVALID', `image ${JSON.stringify(reference)}: ${result}`);
  }
  return result;
}
