// Every container and volume Proctor makes carries these labels, so that a restarted Proctor
// (or a test's afterEach) finds and removes what a crashed one left behind; the host label
// lets each host's reaper touch only what that host made (hosts may share an engine).
import { machineHost } from '../config.js';

export const LABEL = {
  job: 'proctor.job',
  attempt: 'proctor.attempt',
  role: 'proctor.role',
  home: 'proctor.home',
  /** The host identity of the process that made it (config.ts: PROCTOR_HOST, [worker] host). */
  host: 'proctor.host',
  /** Workspace templates (workspace-template.ts): the hash of what the template holds. */
  template: 'proctor.template',
  /** The daemon-local image id a template was made from. */
  templateImage: 'proctor.template.image',
  /** What a template's files are laid out as (template.ts: TEMPLATE_LAYOUT); absent: layout 1. */
  templateLayout: 'proctor.template.layout',
  /**
   * `image` on a template that is its image's, shared by every home on the engine (template.ts:
   * templateScope); absent on a home's.
   */
  templateScope: 'proctor.template.scope',
  /** On a built image: the content hash of the build context it was built from (images.ts). */
  context: 'proctor.context',
  /** On a built image: the Dockerfile's path in that context. */
  dockerfile: 'proctor.dockerfile',
  /** On an agent layer (src/agents/layer.ts): the agent definition's name. */
  agent: 'proctor.agent',
  /** On an agent layer: the digest of what it installs (installDigest). */
  agentDigest: 'proctor.agent.digest',
  /** On an agent layer: the daemon-local id of the task image it was built on. */
  agentBase: 'proctor.agent.base',
} as const;

export const ROLES = [
  'solver',
  'evaluator',
  'init',
  'capture',
  'probe',
  'build',
  'template',
] as const;
export type Role = (typeof ROLES)[number];

export interface Owner {
  /** The job id (or, outside jobs, a caller-chosen id such as `validate-<uuid>`). */
  job: string;
  attempt: number;
  /** The Proctor home, so that two homes on one engine never reap each other's resources. */
  home: string;
  /**
   * The host identity of the worker that runs the attempt (ProctorConfig.host). Default: the
   * machine's hostname (commands that make containers outside jobs, such as `proctor derive`).
   */
  host?: string;
}

/** The host an owner's resources are labelled with. */
export function ownerHost(owner: Owner): string {
  return owner.host ?? machineHost();
}

export function labelsFor(owner: Owner, role: Role): Record<string, string> {
  return {
    [LABEL.job]: owner.job,
    [LABEL.attempt]: String(owner.attempt),
    [LABEL.role]: role,
    [LABEL.home]: owner.home,
    [LABEL.host]: ownerHost(owner),
  };
}
