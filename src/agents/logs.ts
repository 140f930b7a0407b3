// Reading back what an agent logged (its definition's `logs`: files, or folders whose files are
// all taken), for the solve's artifacts. Read from the running container by exec as the sandbox
// user, because the HOME it writes is a tmpfs that the engine's archive API does not see, and
// bounded three ways: the number of files, the bytes of each (the start of a file is kept; the
// result says how long it was), and the time of each read.
import type { DockerClient } from '../sandbox/docker.js';
import { execInContainer } from '../sandbox/exec.js';

export const LOG_DEFAULTS = {
  /** Files read at most, over all the definition's paths. */
  files: 50,
  /** Bytes read of each file. */
  fileBytes: 1024 * 1024,
  /** The time allowed to list, and to read each file. */
  timeoutMs: 15_000,
} as const;

export interface AgentLog {
  path: string;
  /** The file's size in the container. */
  bytes: number;
  /** Its first `fileBytes`, as UTF-8. */
  text: string;
  truncated: boolean;
}

// $@: the paths. Regular files, and the regular files under folders; nothing else.
const LIST_SCRIPT = `for p in "$@"; do
  if [ -f "$p" ] && [ ! -L "$p" ]; then printf '%s\\n' "$p"
  elif [ -d "$p" ] && [ ! -L "$p" ]; then find "$p" -type f 2>/dev/null | sort
  fi
done`;

export async function captureAgentLogs(
  docker: DockerClient,
  containerId: string,
  paths: string[],
  options: { user: string; files?: number; fileBytes?: number; timeoutMs?: number },
): Promise<AgentLog[]> {
  const maxFiles = options.files ?? LOG_DEFAULTS.files;
  const fileBytes = options.fileBytes ?? LOG_DEFAULTS.fileBytes;
  const timeoutMs = options.timeoutMs ?? LOG_DEFAULTS.timeoutMs;
  const listed = await execInContainer(docker, containerId, {
    cmd: ['sh', '-c', LIST_SCRIPT, 'proctor-logs', ...paths],
    user: options.user,
    workdir: '/',
    timeoutMs,
    outputBytes: 256 * 1024,
  });
  const files = listed.stdout
    .split('\n')
    .filter((line) => line.startsWith('/'))
    .slice(0, maxFiles);
  const logs: AgentLog[] = [];
  for (const path of files) {
    const read = await execInContainer(docker, containerId, {
      cmd: [
        'sh',
        '-c',
        'wc -c < "$1" && head -c "$2" -- "$1"',
        'proctor-log',
        path,
        `${fileBytes}`,
      ],
      user: options.user,
      workdir: '/',
      timeoutMs,
      outputBytes: fileBytes + 64,
    });
    if (read.exitCode !== 0) continue; // gone, or not readable by the sandbox user
    const newline = read.stdout.indexOf('\n');
    const bytes = Number(read.stdout.slice(0, newline).trim());
    const text = read.stdout.slice(newline + 1);
    logs.push({ path, bytes, text, truncated: bytes > fileBytes });
  }
  return logs;
}
