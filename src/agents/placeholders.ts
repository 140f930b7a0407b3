// The placeholders of an agent definition: what Proctor fills in when it starts the agent, so
// that a definition never holds a value of one run (the proxy's port, the run token) or a real
// key. `{{name}}` only; any other `{{…}}` is an error when the definition is read, so that a
// typo (`{{base-url}}`) is found then, not at the first solve.

/** Every placeholder and what it stands for. */
export const PLACEHOLDERS = {
  /** The model proxy's forwarder as the agent reaches it: `http://127.0.0.1:PORT`, no path. */
  base_url: 'the model base URL, http://127.0.0.1:PORT (add /v1 where the agent wants it)',
  /** The solve's run-scoped token, which the proxy accepts; never a provider's key. */
  token: "the solve's run token (the proxy swaps it for the real key on the host)",
  model: 'the model name of the solve',
  /** The task's description as one argument (prompt = "argument" only). */
  prompt: "the task's description as one argument",
  /** A file holding the task's description (prompt = "file" only). */
  prompt_file: "the path of a file holding the task's description",
  home: "the agent's HOME, a fresh tmpfs",
  workdir: "the task's work tree, the agent's working directory",
} as const;

export type Placeholder = keyof typeof PLACEHOLDERS;
export type PlaceholderValues = Record<Placeholder, string>;

const PATTERN = /\{\{([^{}]*)\}\}/g;

/** The names used in `text`, in order (unknown ones included). */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PATTERN)].map((m) => m[1] ?? '');
}

export function isPlaceholder(name: string): name is Placeholder {
  return Object.hasOwn(PLACEHOLDERS, name);
}

/** `text` with every placeholder replaced; the names were checked when the definition was read. */
export function fill(text: string, values: PlaceholderValues): string {
  return text.replace(PATTERN, (_, name: string) =>
    isPlaceholder(name) ? values[name] : `{{${name}}}`,
  );
}
