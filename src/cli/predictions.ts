// SWE-bench predictions, read for `proctor grade SUITE --predictions FILE`: JSON lines or one
// JSON array of {instance_id, model_name_or_path, model_patch}. Pure: parsing and matching to a
// suite's tasks, each problem kept with the line it is on, so the command can list what it
// skips and grade the rest.
//
// Other keys of a prediction (harnesses add their own: cost, full_output, …) are ignored, as
// SWE-bench's own harness does. One file is one model: a line naming another model is skipped.
import { z } from 'zod';
import { zodProblem } from '../problems.js';

/** Largest predictions file read: about 2,000 SWE-bench patches fit in a few megabytes. */
export const MAX_PREDICTIONS_BYTES = 256 * 1024 * 1024;

const predictionSchema = z.object({
  instance_id: z.string().min(1).max(512),
  model_name_or_path: z.string().min(1).max(200),
  model_patch: z.string().nullable(),
});

export interface Prediction {
  /** 1-based line of the file where it starts. */
  line: number;
  instanceId: string;
  model: string;
  /** null: the model gave no patch (`model_patch` null). */
  patch: string | null;
}

export interface Skipped {
  line: number;
  instanceId: string | null;
  problem: string;
}

export interface ParsedPredictions {
  predictions: Prediction[];
  skipped: Skipped[];
}

const lineAt = (text: string, offset: number, from = 0, line = 1): number => {
  let n = line;
  for (let i = from; i < offset; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
};

/**
 * The elements of a top-level JSON array, each with the line it starts on. JSON.parse keeps
 * no positions, so the array is cut at its top-level commas first (strings and nesting
 * respected); an element is then parsed alone. Null when the text is not one array.
 */
function arrayElements(text: string): Array<{ line: number; text: string }> | null {
  const start = text.indexOf('[');
  const items: Array<{ line: number; text: string }> = [];
  let depth = 0;
  let inString = false;
  let from = start + 1;
  let line = 1;
  let counted = 0;
  const push = (end: number) => {
    const raw = text.slice(from, end);
    const lead = raw.length - raw.trimStart().length;
    if (raw.trim() === '') return;
    line = lineAt(text, from + lead, counted, line);
    counted = from + lead;
    items.push({ line, text: raw.trim() });
  };
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        push(i);
        return text.slice(i + 1).trim() === '' ? items : null;
      }
    } else if (c === ',' && depth === 1) {
      push(i);
      from = i + 1;
    }
  }
  return null;
}

function entries(text: string): Array<{ line: number; text: string }> | string {
  const first = text.trimStart()[0];
  if (first === '[') {
    const items = arrayElements(text);
    if (items === null) return 'not a JSON array (it does not end where the array does)';
    return items;
  }
  // A dict keyed by instance id (one object over many lines) is not a format this reads; one
  // object on one line is a file of one JSON line.
  if (first === '{' && text.trim().includes('\n') && isWholeObject(text)) {
    return 'a JSON object; expected JSON lines or a JSON array of predictions';
  }
  return text
    .split('\n')
    .map((t, i) => ({ line: i + 1, text: t.trim() }))
    .filter((e) => e.text !== '');
}

function isWholeObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * Parses a predictions file. Every problem is a skipped entry naming its line: text that is
 * not JSON, a value that is not a prediction, a model other than the first line's. Returns a
 * string when the file as a whole is unreadable.
 */
export function parsePredictions(text: string): ParsedPredictions | string {
  const found = entries(text);
  if (typeof found === 'string') return found;
  const predictions: Prediction[] = [];
  const skipped: Skipped[] = [];
  let model: { name: string; line: number } | undefined;
  for (const entry of found) {
    let value: unknown;
    try {
      value = JSON.parse(entry.text);
    } catch (error) {
      skipped.push({
        line: entry.line,
        instanceId: null,
        problem: `not JSON: ${(error as Error).message}`,
      });
      continue;
    }
    const parsed = predictionSchema.safeParse(value);
    const id =
      typeof (value as { instance_id?: unknown } | null)?.instance_id === 'string'
        ? (value as { instance_id: string }).instance_id
        : null;
    if (!parsed.success) {
      const { path, detail } = zodProblem(parsed.error, 'prediction');
      skipped.push({ line: entry.line, instanceId: id, problem: `${path}: ${detail}` });
      continue;
    }
    const p = parsed.data;
    model ??= { name: p.model_name_or_path, line: entry.line };
    if (p.model_name_or_path !== model.name) {
      skipped.push({
        line: entry.line,
        instanceId: p.instance_id,
        problem: `model_name_or_path ${JSON.stringify(p.model_name_or_path)} is not the model of line ${model.line} (${JSON.stringify(model.name)}); one file is one model`,
      });
      continue;
    }
    predictions.push({
      line: entry.line,
      instanceId: p.instance_id,
      model: p.model_name_or_path,
      patch: p.model_patch,
    });
  }
  return { predictions, skipped };
}

/** A task a prediction can be matched to. */
export interface MatchableTask {
  id: string;
  instanceId?: string | undefined;
}

export interface Matched<T> {
  prediction: Prediction;
  task: T;
}

/**
 * Matches each prediction to a task by `[source].instance_id`, else by task id. An unknown id
 * is skipped; so is every prediction of an instance predicted more than once (which one was
 * meant cannot be told), each naming the other lines. Tasks left without a prediction are
 * "not submitted".
 */
export function matchPredictions<T extends MatchableTask>(
  predictions: readonly Prediction[],
  tasks: readonly T[],
): { matched: Array<Matched<T>>; skipped: Skipped[]; notSubmitted: T[] } {
  const byInstance = new Map<string, T[]>();
  const byId = new Map<string, T>();
  for (const task of tasks) {
    byId.set(task.id, task);
    if (task.instanceId !== undefined) {
      byInstance.set(task.instanceId, [...(byInstance.get(task.instanceId) ?? []), task]);
    }
  }
  const lines = new Map<string, number[]>();
  for (const p of predictions)
    lines.set(p.instanceId, [...(lines.get(p.instanceId) ?? []), p.line]);
  const matched: Array<Matched<T>> = [];
  const skipped: Skipped[] = [];
  for (const p of predictions) {
    const seen = lines.get(p.instanceId) ?? [];
    if (seen.length > 1) {
      const others = seen.filter((l) => l !== p.line).join(', ');
      skipped.push({
        line: p.line,
        instanceId: p.instanceId,
        problem: `duplicate: instance ${p.instanceId} is also predicted on line ${others}`,
      });
      continue;
    }
    const candidates = byInstance.get(p.instanceId);
    if (candidates !== undefined && candidates.length > 1) {
      skipped.push({
        line: p.line,
        instanceId: p.instanceId,
        problem: `ambiguous: tasks ${candidates.map((t) => t.id).join(', ')} all have instance_id ${p.instanceId}`,
      });
      continue;
    }
    const task = candidates?.[0] ?? byId.get(p.instanceId);
    if (task === undefined) {
      skipped.push({
        line: p.line,
        instanceId: p.instanceId,
        problem: `unknown instance_id ${p.instanceId}: no task of the suite has it as [source].instance_id or id`,
      });
      continue;
    }
    matched.push({ prediction: p, task });
  }
  const submitted = new Set(matched.map((m) => m.task));
  // A task whose only predictions were skipped as duplicates was not submitted either.
  return { matched, skipped, notSubmitted: tasks.filter((t) => !submitted.has(t)) };
}
