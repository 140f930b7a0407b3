// The built-in agent definitions, one TOML file each under the project's agents/ folder, and
// how a name or a path on the command line becomes a definition: a bare name is a built-in, a
// path (anything with a / or ending in .toml) is the user's own file.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProctorError } from '../errors.js';
import { projectPath } from '../paths.js';
import { loadAgentDefinition, type AgentDefinition } from './definition.js';

/** The folder of the built-in definitions. */
export const BUILTIN_DIR = projectPath('agents');

/** The built-in agents' names, sorted. */
export function builtinAgentNames(): string[] {
  return readdirSync(BUILTIN_DIR)
    .filter((f) => f.endsWith('.toml'))
    .map((f) => f.slice(0, -'.toml'.length))
    .sort();
}

/** The built-in definition `name`. */
export function builtinAgent(name: string): AgentDefinition {
  const names = builtinAgentNames();
  if (!names.includes(name)) {
    throw new ProctorError(
      'USAGE',
      `no built-in agent named ${JSON.stringify(name)}; the built-ins are ${names.join(', ')} (or give the path of a definition file)`,
    );
  }
  const definition = loadAgentDefinition(join(BUILTIN_DIR, `${name}.toml`), `builtin:${name}`);
  if (definition.name !== name) {
    throw new ProctorError(
      'CONFIG_INVALID',
      `agent definition builtin:${name}: name: is ${JSON.stringify(definition.name)}, not the file's name`,
    );
  }
  return definition;
}

/** `--agent NAME|FILE`: a built-in by name, or the definition file at a path. */
export function resolveAgent(nameOrFile: string): AgentDefinition {
  if (nameOrFile.includes('/') || nameOrFile.endsWith('.toml')) {
    return loadAgentDefinition(nameOrFile);
  }
  return builtinAgent(nameOrFile);
}
