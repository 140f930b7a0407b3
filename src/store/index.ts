// The store: artifact files on disk and the redaction every persisted value passes through.
// Shared below every other area; it imports nothing from them.
export {
  createArtifactStore,
  DEFAULT_MAX_ARTIFACT_BYTES,
  locate as locateArtifact,
  MAX_ARTIFACT_NAME_LENGTH,
  checkSlice,
  prepareArtifact,
  registerOrDiscard,
  safeFileName,
  utf8Cut,
  validateArtifactName,
} from './artifacts.js';
export type {
  ArtifactDownload,
  ArtifactIndex,
  ArtifactInput,
  ArtifactRecord,
  ArtifactStore,
  ArtifactStoreOptions,
} from './artifacts.js';
export { containsSecret, createRedactor, MIN_SECRET_LENGTH, REDACTED } from './redact.js';
export type { Redactor, RedactorOptions } from './redact.js';
export { isTextMediaType, redactDocument } from './redact-document.js';
export { isSensitiveKey } from './sensitive-keys.js';
