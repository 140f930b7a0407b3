// The sandbox: images, workspace volumes, hardened containers, bounded exec and capture, and
// cleanup. It runs containers; it knows no jobs and no grading.
export { createDockerClient, requireDocker, isNotFound } from './docker.js';
export type { DockerClient } from './docker.js';
export { LABEL, ROLES, labelsFor, ownerHost } from './labels.js';
export type { Owner, Role } from './labels.js';
export { hardenedContainerOptions, INIT_CAPABILITIES, workTmpfs } from './profile.js';
export type { Limits, SandboxSpec, TmpfsMount, VolumeMount } from './profile.js';
export {
  IMAGE_TIMEOUT_HINT,
  resolveImage,
  readRepositoryHead,
  readRepositoryCommit,
  parseImageReference,
} from './image.js';
export type {
  ImageIdentity,
  ImageReference,
  ImageSource,
  RepositoryCommit,
  RepositoryHeadOptions,
  ResolveImageOptions,
  ResolvedImage,
} from './image.js';
export { CA_VARIABLES, TRUST_ROOT } from './build-trust.js';
export type { BuildTrust } from './build-trust.js';
export { createContextCache, RACY_MS } from './context-cache.js';
export type {
  ContextCache,
  ContextCacheOptions,
  ContextListing,
  ContextState,
} from './context-cache.js';
export { createWorkspace, removeVolume } from './workspace.js';
export {
  createTemplateStore,
  DEFAULT_TEMPLATE_LIMIT,
  listAllTemplates,
  listTemplates,
  reapTemplates,
  templateKey,
  TEMPLATE_MOUNT,
} from './template.js';
export type {
  AcquiredTemplate,
  History,
  TemplateOptions,
  TemplateSpec,
  TemplateStore,
} from './template.js';
export { homeState, pruneTemplates, reapGoneHomes } from './template-prune.js';
export type {
  PruneOptions,
  PruneResult,
  TemplateOutcome,
  TemplateReason,
} from './template-prune.js';
export type { WorkspaceSpec } from './workspace.js';
export { startWithWorkspace } from './workspace-start.js';
export type {
  WorkspaceContainer,
  WorkspaceContainerSpec,
  WorkspaceMedium,
} from './workspace-start.js';
export { runToCompletion } from './run.js';
export type { RunOptions, RunResult } from './run.js';
export { execInContainer, EXEC_DEFAULTS } from './exec.js';
export type { ExecOptions, ExecResult } from './exec.js';
export { createOutputBuffer } from './output-buffer.js';
export type { OutputBuffer } from './output-buffer.js';
export { capturePatch } from './capture.js';
export type { CaptureSpec, CapturedPatch } from './capture.js';
export { removeOwned, reapOrphans } from './cleanup.js';
export type { ReapScope, Removed } from './cleanup.js';
export { effectiveSeconds } from './limits.js';
export type { AssetFile } from './assets.js';
export { idleUid, startIdleContainer, removeContainer } from './container.js';
