// The submodules of a SWE-bench row's base commit (gitlinks, mode 160000), and which of them
// the import can vendor: a grade has no network, so SWE-bench's `git submodule update --init`
// cannot run, and a submodule is only filled when --repos holds a mirror of its repository.
//
// Its repository is found by the URL that .gitmodules at the commit gives its path, with the
// lookup of the row's own repository: https://github.com/OWNER/NAME(.git), git@host:OWNER/NAME,
// ssh:// or git:// → DIR/OWNER__NAME or DIR/OWNER__NAME.git (the URL's last two path segments;
// a relative URL, ../NAME, is resolved against github.com/<the superproject>). A mirror that has
// the gitlink's commit vendors it: the snapshot holds its files in place of the gitlink
// (snapshot.ts), and its own submodules are looked up the same way, down to MAX_DEPTH. Any
// other submodule stays the empty folder a checkout leaves, with a note naming what to add.
import { git } from '../derive/git.js';
import type { VendoredSubmodule } from '../derive/snapshot.js';

/** Submodules of submodules are vendored this deep (jq's oniguruma is depth 1). */
export const MAX_DEPTH = 4;

export interface SubmodulePlan {
  /** What the snapshot holds in place of gitlinks, parents before their nested submodules. */
  vendored: VendoredSubmodule[];
  /** One per submodule: vendored from where, or left empty and what to add. */
  notes: string[];
}

/** The repository of a submodule URL, as OWNER/NAME; undefined when none can be read. */
export function repoOfUrl(url: string, superproject: string): string | undefined {
  const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
  let segments: string[];
  if (url.startsWith('./') || url.startsWith('../')) {
    // Relative to the superproject's own URL, github.com/OWNER/NAME, as git resolves it.
    segments = superproject.split('/');
    for (const part of url.split('/')) {
      if (part === '..') segments.pop();
      else if (part !== '.' && part !== '') segments.push(part);
    }
  } else {
    const path =
      /^[a-z][a-z0-9+.-]*:\/\/[^/]+\/(.*)$/i.exec(url)?.[1] ??
      /^[^/@:]+@[^/:]+:(.*)$/.exec(url)?.[1];
    if (path === undefined) return undefined;
    segments = path.split('/').filter((s) => s !== '');
  }
  const [owner, last] = segments.slice(-2);
  const name = last?.replace(/\.git$/, '');
  if (segments.length < 2 || owner === undefined || name === undefined) return undefined;
  if (![owner, name].every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) return undefined;
  return `${owner}/${name}`;
}

/** Path → URL, from .gitmodules at `commit`; empty when it has none or git cannot read it. */
async function urlsAt(repo: string, commit: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = (
      await git(repo, ['config', '-z', '--blob', `${commit}:.gitmodules`, '--list'])
    ).toString('utf8');
  } catch {
    return new Map();
  }
  const byName = new Map<string, { path?: string; url?: string }>();
  for (const item of text.split('\0')) {
    const newline = item.indexOf('\n');
    if (newline < 0) continue;
    const match = /^submodule\.(.*)\.(path|url)$/s.exec(item.slice(0, newline));
    if (match?.[1] === undefined || match[2] === undefined) continue;
    const entry = byName.get(match[1]) ?? {};
    entry[match[2] as 'path' | 'url'] = item.slice(newline + 1);
    byName.set(match[1], entry);
  }
  const urls = new Map<string, string>();
  for (const { path, url } of byName.values()) {
    if (path !== undefined && url !== undefined) urls.set(path.replace(/\/+$/, ''), url);
  }
  return urls;
}

/** The gitlinks of `commit`: path and commit id. */
async function gitlinksOf(repo: string, commit: string): Promise<Array<[string, string]>> {
  const entries = (await git(repo, ['ls-tree', '-r', '-z', '--full-tree', commit]))
    .toString('utf8')
    .split('\0');
  return entries.flatMap((entry) => {
    const match = /^160000 commit ([0-9a-f]+)\t(.*)$/s.exec(entry);
    return match?.[1] !== undefined && match[2] !== undefined ? [[match[2], match[1]]] : [];
  });
}

async function hasCommit(repo: string, commit: string): Promise<boolean> {
  try {
    await git(repo, ['cat-file', '-e', `${commit}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

const EMPTY = '(tests in or needing it will be absent; docs/suites.md, Submodules)';

/**
 * Which submodules of `commit` (of `repo`, the mirror of `name`, OWNER/NAME) the snapshot can
 * vendor, by the mirrors `find` returns (DIR/OWNER__NAME or .git, or undefined); `folder`
 * names the path a note tells the user to add.
 */
export async function planSubmodules(
  repo: string,
  name: string,
  commit: string,
  find: (name: string) => string | undefined,
  folder: (name: string) => string,
): Promise<SubmodulePlan> {
  const plan: SubmodulePlan = { vendored: [], notes: [] };
  const walk = async (
    repo: string,
    name: string,
    commit: string,
    prefix: string,
    depth: number,
  ) => {
    const links = await gitlinksOf(repo, commit);
    if (links.length === 0) return;
    const urls = await urlsAt(repo, commit);
    for (const [path, link] of links) {
      const at = `${prefix}${path}`;
      const left = (why: string) =>
        plan.notes.push(`submodule ${at} is left empty: ${why} ${EMPTY}`);
      if (depth > MAX_DEPTH) {
        left(`it is nested deeper than ${MAX_DEPTH} submodules (commit ${link})`);
        continue;
      }
      const url = urls.get(path);
      if (url === undefined) {
        left(
          `.gitmodules names no URL for ${path}, so no mirror of commit ${link} can be looked up`,
        );
        continue;
      }
      const owner = repoOfUrl(url, name);
      if (owner === undefined) {
        left(`its URL ${url} names no OWNER/NAME to look up in --repos (commit ${link})`);
        continue;
      }
      const mirror = find(owner);
      if (mirror === undefined) {
        left(
          `no mirror of ${owner} (${url}); add ${folder(owner)}.git (a bare clone) to --repos with commit ${link}`,
        );
        continue;
      }
      if (!(await hasCommit(mirror, link))) {
        left(`${mirror} lacks commit ${link}; fetch it into that mirror`);
        continue;
      }
      plan.vendored.push({ path: at, repo: mirror, commit: link });
      plan.notes.push(`submodule ${at} vendored from ${mirror} at ${link}`);
      await walk(mirror, owner, link, `${at}/`, depth + 1);
    }
  };
  await walk(repo, name, commit, '', 1);
  return plan;
}
