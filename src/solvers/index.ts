// Solvers: the model loops that work on a task's checkout from the host, and what they share
// — the one solver deadline and the three tools that are their only way into the container.
// A solver never imports the grader.
export { createDeadline } from './deadline.js';
export type { Deadline } from './deadline.js';
export { TOOL_DEFINITIONS, TOOL_NAMES, ToolArgumentsError, callTool } from './tools.js';
export type { ToolName, ToolResult, ToolSandbox } from './tools.js';
export { runFlat } from './flat.js';
export type { FlatProfile, FlatRun } from './flat.js';
export { createTranscript, SOLVE_ENDS } from './transcript.js';
export type { SolveEnd, SolveEndReason, Transcript, TranscriptEvent } from './transcript.js';
export { chatCompletionUsage, costUsd, createSolveMeter } from './usage.js';
export type { SolveMeter, SolveTotals, TokenPrices, TokenUsage } from './usage.js';
