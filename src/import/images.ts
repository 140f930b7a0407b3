// `--images`: the prebuilt image of each SWE-bench row, from a name template. Two registries'
// conventions are built in; anything else is a template of the user's own:
//   swebench  swebench/sweb.eval.{arch}.{instance_id_1776}:latest, as SWE-bench's harness names
//             its remote instance images (TestSpec.instance_image_key: the instance id
//             lower-cased, then every `__` spelled `_1776_`)
//   epoch     ghcr.io/epoch-research/swe-bench.eval.{arch}.{instance_id}:latest
// Placeholders: {instance_id} (as the row has it), {instance_id_1776} (SWE-bench's spelling,
// above), {repo} (owner__name, lower-cased, as --repos folders are named), {arch} (x86_64 or
// arm64, this machine's) and {version} (the row's). Pure: the digest is asked of the registry
// elsewhere (src/sandbox/distribution.ts).
import { ProctorError } from '../errors.js';
import { imageReferenceProblem } from '../sandbox/image-reference.js';
import type { SwebenchRow } from './rows.js';

export const IMAGE_CONVENTIONS = {
  swebench: 'swebench/sweb.eval.{arch}.{instance_id_1776}:latest',
  epoch: 'ghcr.io/epoch-research/swe-bench.eval.{arch}.{instance_id}:latest',
} as const;

export const PLACEHOLDERS = ['instance_id', 'instance_id_1776', 'repo', 'arch', 'version'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/**
 * Where SWE-bench's images keep the project: the work tree, and the conda environment its
 * tests run in (the harness runs `conda activate testbed` before every test command).
 */
export const SWEBENCH_IMAGE_LAYOUT = {
  workdir: '/testbed',
  python: '/opt/miniconda3/envs/testbed/bin/python',
} as const;

/** SWE-bench's and Docker's name for this machine's architecture. */
export function hostArch(arch: string = process.arch): string {
  return arch === 'arm64' ? 'arm64' : 'x86_64';
}

/** SWE-bench's spelling of an instance id in a remote image name. */
export const instanceId1776 = (id: string) => id.toLowerCase().replaceAll('__', '_1776_');

export interface ImageTemplate {
  /** The --images value as given. */
  given: string;
  template: string;
}

/**
 * The template of an --images value: a built-in convention's, or the value itself when it
 * holds a placeholder. An unknown name, an unknown placeholder or an unclosed brace is a
 * USAGE error naming it.
 */
export function parseImageTemplate(value: string): ImageTemplate {
  if (value in IMAGE_CONVENTIONS) {
    return { given: value, template: IMAGE_CONVENTIONS[value as keyof typeof IMAGE_CONVENTIONS] };
  }
  const known = PLACEHOLDERS.map((p) => `{${p}}`).join(', ');
  if (!value.includes('{')) {
    throw new ProctorError(
      'USAGE',
      `--images ${value}: not a known convention (${Object.keys(IMAGE_CONVENTIONS).join(', ')}) nor a template with a placeholder (${known})`,
    );
  }
  const names = [...value.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] ?? '');
  const unknown = names.find((n) => !(PLACEHOLDERS as readonly string[]).includes(n));
  if (unknown !== undefined) {
    throw new ProctorError(
      'USAGE',
      `--images ${value}: unknown placeholder {${unknown}}; the placeholders are ${known}`,
    );
  }
  if (/[{}]/.test(value.replace(/\{[^{}]*\}/g, ''))) {
    throw new ProctorError('USAGE', `--images ${value}: a brace without its pair`);
  }
  if (value.includes('@')) {
    throw new ProctorError(
      'USAGE',
      `--images ${value}: a template names a tag, not a digest; the digest is asked of the registry`,
    );
  }
  return { given: value, template: value };
}

/** The image name (`repository:tag`) of one row, or why the row has none. */
export function imageName(
  template: ImageTemplate,
  row: Pick<SwebenchRow, 'instanceId' | 'repo' | 'version'>,
  arch: string = hostArch(),
): { name: string } | { reason: string } {
  const values: Record<Placeholder, string | undefined> = {
    instance_id: row.instanceId,
    instance_id_1776: instanceId1776(row.instanceId),
    repo: row.repo.toLowerCase().replace('/', '__'),
    arch,
    version: row.version,
  };
  let missing: string | undefined;
  const filled = template.template.replace(/\{([a-z_0-9]+)\}/g, (_, key: Placeholder) => {
    const value = values[key];
    if (value === undefined) missing = key;
    return value ?? '';
  });
  if (missing !== undefined) {
    return { reason: `--images ${template.given}: the row has no ${missing} for {${missing}}` };
  }
  const at = filled.lastIndexOf(':');
  const name = at > filled.lastIndexOf('/') ? filled : `${filled}:latest`;
  const problem = imageReferenceProblem(`${name}@sha256:${'0'.repeat(64)}`);
  if (problem !== undefined) {
    return { reason: `--images ${template.given} gives ${JSON.stringify(name)}: ${problem}` };
  }
  return { name };
}
