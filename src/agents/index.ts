// Agents: CLI coding agents (Claude Code, Gemini CLI, Qwen Code, opencode, Codex, or the
// user's own) described by a small TOML definition, installed into a layer on the task's image,
// and run in the solver's sandbox against the work tree. It knows no jobs and no grading.
export {
  installDigest,
  loadAgentDefinition,
  parseAgentDefinition,
  MAX_DEFINITION_BYTES,
  MAX_SETTINGS_BYTES,
  PROMPT_MODES,
  PROTOCOLS,
} from './definition.js';
export type { AgentDefinition, PromptMode, Protocol } from './definition.js';
export { PLACEHOLDERS, fill } from './placeholders.js';
export type { Placeholder, PlaceholderValues } from './placeholders.js';
export { BUILTIN_DIR, builtinAgent, builtinAgentNames, resolveAgent } from './builtin.js';
export {
  agentBinDir,
  buildAgentLayer,
  createAgentLayers,
  findAgentLayer,
  layerDigest,
  layerDockerfile,
  removeAgentLayers,
  LAYER_LAYOUT,
} from './layer.js';
export type { AgentLayer, AgentLayers, LayerBuildOptions } from './layer.js';
export { AGENT_HOME, AGENTS_ROOT } from './layer-script.js';
export { AGENT_DEFAULTS, PROMPT_FILE, classify, runAgent, startAgentSandbox } from './run.js';
export type { AgentOutcome, AgentRunResult, AgentRunSpec, AgentSandboxSpec } from './run.js';
export { captureAgentLogs, LOG_DEFAULTS } from './logs.js';
export type { AgentLog } from './logs.js';
