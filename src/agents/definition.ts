// An agent definition: the small TOML file that says how to install a CLI coding agent into a
// task's image, how to start it on a task, and what it needs to reach a model through
// Proctor's proxy. Read strictly: an unknown key, a bad value, an unknown placeholder or a
// credential-like variable set to anything but the run token is one line naming the file and
// the key, and nothing runs.
//
// What it may not hold is as important as what it holds: no real key (a variable whose name
// looks like a credential must be exactly `{{token}}`), no host path the container would see
// (tarball and binary paths are read on the host at build time only), no mutable version
// (an npm spec pins an exact version, so that the layer built from it is the same every time).
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { ProctorError, describeError } from '../errors.js';
import { tomlProblem, zodProblems, type Problem } from '../problems.js';
import { WIRE_PROTOCOLS } from '../proxy/protocols.js';
import { CREDENTIAL_NAME } from '../sandbox/profile.js';
import { isPlaceholder, placeholdersIn, type Placeholder } from './placeholders.js';

/** The wire protocols an agent speaks to its model: the ones the model proxy serves. */
export const PROTOCOLS = WIRE_PROTOCOLS;
export type Protocol = (typeof PROTOCOLS)[number];

/** How the task's description reaches the agent. */
export const PROMPT_MODES = ['argument', 'file', 'stdin'] as const;
export type PromptMode = (typeof PROMPT_MODES)[number];

/** The largest definition file read. */
export const MAX_DEFINITION_BYTES = 64 * 1024;
/** The largest settings file a definition writes into HOME. */
export const MAX_SETTINGS_BYTES = 64 * 1024;

const NAME = /^[a-z][a-z0-9-]{0,39}$/;
/** `pkg@1.2.3` or `@scope/pkg@1.2.3(-pre)`: an exact version, never a tag or a range. */
const NPM_SPEC = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*@\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const NODE_VERSION = /^\d+\.\d+\.\d+$/;
/** `name==1.2.3` (a PyPI project and one exact release, pre- and post-releases allowed). */
const PIP_PIN =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?==\d+(?:\.\d+){1,3}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Set by Proctor for every agent; a definition cannot change them. */
const RESERVED_ENV = new Set(['HOME', 'PATH', 'PROCTOR_EXEC_ID', 'TMPDIR']);

const text = (what: string) =>
  z
    .string({ error: `expected ${what}` })
    .refine((s) => !s.includes('\0'), { message: `${what} must not contain NUL` });

const relativePath = text('a relative path').refine(
  (p) => p !== '' && !isAbsolute(p) && !p.split('/').some((part) => part === '..' || part === ''),
  { message: 'expected a relative path inside HOME, without .. or empty parts' },
);

/** A host file copied into the layer's build: its name goes into a Dockerfile line. */
const hostFile = text('a path on the host').refine((p) => /^[A-Za-z0-9._+-]+$/.test(basename(p)), {
  message: 'expected a file name of letters, digits and . _ + - (it becomes a path in the image)',
});

/** Why a pip requirement is not an exact pin, in words a user can act on; undefined if it is one. */
export function pipPinProblem(spec: string): string | undefined {
  if (PIP_PIN.test(spec)) return undefined;
  const shown = JSON.stringify(spec);
  if (spec.startsWith('-')) return `${shown} is a pip option; expected a pin such as name==1.2.3`;
  if (/:\/\/|@/.test(spec))
    return `${shown} is a URL or a direct reference; expected a pin such as name==1.2.3 from the index`;
  if (/[[\]]/.test(spec))
    return `${shown} asks for extras; expected a plain pin such as name==1.2.3`;
  if (/[<>~!,*]|===/.test(spec))
    return `${shown} is a range; expected one exact version, such as name==1.2.3`;
  if (!spec.includes('=='))
    return `${shown} is not pinned; expected an exact version, such as ${spec.trim() || 'name'}==1.2.3`;
  return `${shown} is not an exact pin; expected name==X.Y.Z`;
}

const pipPin = text('a pip requirement').superRefine((s, ctx) => {
  const problem = pipPinProblem(s);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const installSchema = z
  .strictObject({
    pip: z
      .union([pipPin, z.array(pipPin).min(1, 'expected at least one pin')], {
        error: 'expected a pin such as "name==1.2.3", or a list of them',
      })
      .transform((v) => (typeof v === 'string' ? [v] : v))
      .optional(),
    npm: text('an npm package spec')
      .refine((s) => NPM_SPEC.test(s), {
        message: 'expected an npm package with an exact version, such as @scope/pkg@1.2.3',
      })
      .optional(),
    tarball: hostFile.optional(),
    binary: hostFile.optional(),
    node: text('"host" or a Node version')
      .refine((s) => s === 'host' || NODE_VERSION.test(s), {
        message: 'expected "host" or an exact Node version such as 22.23.5',
      })
      .default('host'),
  })
  .refine((i) => [i.npm, i.tarball, i.binary, i.pip].filter((v) => v !== undefined).length === 1, {
    message: 'expected exactly one of npm, pip, tarball or binary',
  })
  .refine((i) => i.pip === undefined || i.node === 'host', {
    message:
      "node applies to npm, tarball and binary installs; a pip install runs on the layer's own Python",
    path: ['node'],
  });

const fileSchema = z.strictObject({
  path: relativePath,
  content: text('the file content').refine(
    (s) => Buffer.byteLength(s) <= MAX_SETTINGS_BYTES,
    `expected at most ${MAX_SETTINGS_BYTES} bytes`,
  ),
});

const schema = z.strictObject({
  name: text('a name').refine((s) => NAME.test(s), {
    message: 'expected lowercase letters, digits and -, starting with a letter, at most 40',
  }),
  description: text('a description').optional(),
  protocol: z.enum(PROTOCOLS, { error: `expected one of ${PROTOCOLS.join(', ')}` }),
  install: installSchema,
  command: z.array(text('a string')).min(1, 'expected the program and its arguments'),
  prompt: z.enum(PROMPT_MODES, { error: `expected one of ${PROMPT_MODES.join(', ')}` }),
  version_command: z.array(text('a string')).min(1).optional(),
  env: z.record(text('a name'), text('a string')).default({}),
  logs: z.array(text('a path')).default([]),
  files: z.array(fileSchema).default([]),
});

export interface AgentDefinition {
  name: string;
  description?: string;
  protocol: Protocol;
  install: {
    /** An exact npm spec, installed from the registry during the layer's build. */
    npm?: string;
    /** Exact PyPI pins (`name==1.2.3`), installed into a venv on the layer's own Python. */
    pip?: string[];
    /** Absolute host paths (resolved against the definition's folder). */
    tarball?: string;
    binary?: string;
    /** `host`: the host's own node binary; else the exact Node version installed from npm. */
    node: string;
  };
  command: string[];
  prompt: PromptMode;
  versionCommand?: string[];
  env: Record<string, string>;
  logs: string[];
  files: { path: string; content: string }[];
  /** Where it was read from (`builtin:NAME` for a built-in). */
  source: string;
}

function invalid(file: string, problems: Problem[]): ProctorError {
  const lines = problems.map(
    (p) => `agent definition ${file}: ${p.key === '' ? '' : `${p.key}: `}${p.message}`,
  );
  return new ProctorError('CONFIG_INVALID', lines.join('\n'), { data: { file, problems } });
}

/** The placeholders `value` uses that are unknown or not allowed where it is. */
function placeholderProblems(
  key: string,
  value: string,
  allowed: (name: Placeholder) => boolean,
): Problem[] {
  const problems: Problem[] = [];
  for (const name of placeholdersIn(value)) {
    if (!isPlaceholder(name)) problems.push({ key, message: `unknown placeholder {{${name}}}` });
    else if (!allowed(name)) problems.push({ key, message: `{{${name}}} is not allowed here` });
  }
  return problems;
}

/** The checks zod cannot express: placeholders, the prompt's mode, the environment. */
function crossCheck(d: z.infer<typeof schema>): Problem[] {
  const problems: Problem[] = [];
  const anywhere = (name: Placeholder) => name !== 'prompt' && name !== 'prompt_file';
  const promptHere = (name: Placeholder) =>
    anywhere(name) ||
    (name === 'prompt' && d.prompt === 'argument') ||
    (name === 'prompt_file' && d.prompt === 'file');
  d.command.forEach((arg, i) =>
    problems.push(...placeholderProblems(`command[${i}]`, arg, promptHere)),
  );
  d.version_command?.forEach((arg, i) =>
    problems.push(...placeholderProblems(`version_command[${i}]`, arg, anywhere)),
  );
  const uses = (name: Placeholder) =>
    [...d.command, ...Object.values(d.env)].some((s) => placeholdersIn(s).includes(name));
  if (d.prompt === 'argument' && !d.command.some((a) => placeholdersIn(a).includes('prompt'))) {
    problems.push({ key: 'command', message: 'prompt = "argument" needs {{prompt}} in command' });
  }
  if (d.prompt === 'file' && !uses('prompt_file')) {
    problems.push({
      key: 'command',
      message: 'prompt = "file" needs {{prompt_file}} in command or env',
    });
  }
  for (const [name, value] of Object.entries(d.env)) {
    const key = `env.${name}`;
    if (!ENV_NAME.test(name)) problems.push({ key, message: 'invalid environment name' });
    else if (RESERVED_ENV.has(name)) problems.push({ key, message: 'set by Proctor' });
    else if (CREDENTIAL_NAME.test(name) && value !== '{{token}}') {
      problems.push({
        key,
        message: 'a credential-like variable must be exactly "{{token}}", never a real key',
      });
    }
    const fileMode = (n: Placeholder) =>
      anywhere(n) || (n === 'prompt_file' && d.prompt === 'file');
    problems.push(...placeholderProblems(key, value, fileMode));
  }
  d.logs.forEach((path, i) => {
    const key = `logs[${i}]`;
    problems.push(...placeholderProblems(key, path, anywhere));
    if (!path.startsWith('/') && !path.startsWith('{{home}}') && !path.startsWith('{{workdir}}')) {
      problems.push({ key, message: 'expected an absolute path, {{home}}/… or {{workdir}}/…' });
    }
    if (path.split('/').includes('..')) problems.push({ key, message: 'must not contain ..' });
  });
  d.files.forEach((f, i) => {
    problems.push(...placeholderProblems(`files[${i}].path`, f.path, () => false));
    problems.push(...placeholderProblems(`files[${i}].content`, f.content, anywhere));
  });
  const paths = new Set<string>();
  d.files.forEach((f, i) => {
    if (paths.has(f.path)) problems.push({ key: `files[${i}].path`, message: 'written twice' });
    paths.add(f.path);
  });
  return problems;
}

/** Parses a definition's text; `file` names it in errors, `dir` resolves relative host paths. */
export function parseAgentDefinition(
  source: string,
  file: string,
  dir = dirname(resolve(file)),
): AgentDefinition {
  let raw: unknown;
  try {
    raw = parseToml(source);
  } catch (error) {
    throw invalid(file, [{ key: '', message: tomlProblem(error) }]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(file, zodProblems(parsed.error));
  const d = parsed.data;
  const problems = crossCheck(d);
  if (problems.length > 0) throw invalid(file, problems);
  const hostPath = (p: string | undefined) => (p === undefined ? undefined : resolve(dir, p));
  const tarball = hostPath(d.install.tarball);
  const binary = hostPath(d.install.binary);
  return {
    name: d.name,
    ...(d.description === undefined ? {} : { description: d.description }),
    protocol: d.protocol,
    install: {
      ...(d.install.npm === undefined ? {} : { npm: d.install.npm }),
      ...(d.install.pip === undefined ? {} : { pip: d.install.pip }),
      ...(tarball === undefined ? {} : { tarball }),
      ...(binary === undefined ? {} : { binary }),
      node: d.install.node,
    },
    command: d.command,
    prompt: d.prompt,
    ...(d.version_command === undefined ? {} : { versionCommand: d.version_command }),
    env: d.env,
    logs: d.logs,
    files: d.files,
    source: file,
  };
}

/** Reads and parses a definition file (at most MAX_DEFINITION_BYTES). */
export function loadAgentDefinition(path: string, shownAs = path): AgentDefinition {
  let source: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_DEFINITION_BYTES) {
      throw invalid(shownAs, [
        { key: '', message: `${size} bytes; at most ${MAX_DEFINITION_BYTES}` },
      ]);
    }
    source = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw invalid(shownAs, [{ key: '', message: `cannot be read: ${describeError(error)}` }]);
  }
  return parseAgentDefinition(source, shownAs, dirname(resolve(path)));
}

/**
 * What the agent layer is built from, as a digest: the install table, the name (its folder
 * in the image), the host's Node when the layer copies it, the bytes of a tarball or binary,
 * and the layer's layout version. The command, environment and files are not in it: they
 * change how the agent is started, not what is installed.
 */
export function installDigest(definition: AgentDefinition, layout: number): string {
  const hash = createHash('sha256');
  const { install } = definition;
  hash.update(
    JSON.stringify({
      layout,
      name: definition.name,
      npm: install.npm ?? null,
      ...(install.pip === undefined ? {} : { pip: install.pip }),
      node: install.node,
      hostNode: process.version,
    }),
  );
  for (const path of [install.tarball, install.binary]) {
    if (path === undefined) continue;
    try {
      hash.update(readFileSync(path));
    } catch (error) {
      throw invalid(definition.source, [
        {
          key: install.tarball === path ? 'install.tarball' : 'install.binary',
          message: `cannot read ${path}: ${describeError(error)}`,
        },
      ]);
    }
  }
  return hash.digest('hex');
}
