// [source].repo of a derived bundle, from the repository's `origin` remote when it names a
// public repository: `owner/name` for GitHub (as SWE-bench writes it), else the https:// URL.
// A URL with credentials in it, a local path or any other form gives nothing: [source] is
// informational, and a bundle must never carry a secret.
// Also the project's name for a derived task's default id: origin's last path component, so
// that a bare mirror kept at `…/repo` or `…/mirror.git` is still named after its project.
import { gitText } from './git.js';

const REPO = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/;

/** The `[source].repo` value for a remote URL, or undefined. */
export function repoOfRemote(url: string): string | undefined {
  const trimmed = url
    .trim()
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  const ssh = /^(?:ssh:\/\/)?git@github\.com[:/]([^/]+\/[^/]+)$/.exec(trimmed);
  if (ssh?.[1] !== undefined) return REPO.test(ssh[1]) ? ssh[1] : undefined;
  const https = /^https:\/\/([^/@\s]+)\/(.+)$/.exec(trimmed);
  if (https?.[1] === undefined || https[2] === undefined || !REPO.test(https[2])) return undefined;
  if (https[1].toLowerCase() === 'github.com') {
    return https[2].split('/').length === 2 ? https[2] : undefined;
  }
  return `https://${https[1]}/${https[2]}`;
}

/** The repo of `origin` in `repo`, or undefined when there is none or it names no repository. */
export async function originRepo(repo: string): Promise<string | undefined> {
  try {
    return repoOfRemote(await gitText(repo, ['config', '--get', 'remote.origin.url']));
  } catch {
    return undefined;
  }
}

/**
 * The project name in a remote URL: its last path component without `.git`
 * (`https://github.com/pytoolz/toolz.git` → `toolz`, `git@host:a/b.git` → `b`,
 * `/srv/mirrors/toolz.git` → `toolz`), or undefined when it has no path. Never a part of the
 * host or of credentials: the name ends up in a bundle id.
 */
export function nameOfRemote(url: string): string | undefined {
  const trimmed = url.trim();
  let path: string;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(trimmed)) {
    try {
      path = decodeURIComponent(new URL(trimmed).pathname);
    } catch {
      return undefined;
    }
  } else {
    // scp-like `[user@]host:path`; a local path has no colon before its first slash.
    const scp = /^[^/:]+:(.*)$/.exec(trimmed);
    path = scp?.[1] ?? trimmed;
  }
  const name = path
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split('/')
    .at(-1);
  return name === undefined || name === '' || name === '.' || name === '..' ? undefined : name;
}

/** The project name of `origin` in `repo`, or undefined when it has none or names none. */
export async function originName(repo: string): Promise<string | undefined> {
  try {
    return nameOfRemote(await gitText(repo, ['config', '--get', 'remote.origin.url']));
  } catch {
    return undefined;
  }
}
