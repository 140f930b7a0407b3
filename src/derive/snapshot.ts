// The environment of a derived or imported bundle: the author's build context (a Dockerfile
// that installs dependencies outside the work tree) plus the base commit's tracked files,
// committed inside the image as ONE commit with a fixed identity, date and message.
//
// The commit is made on the host first, with git plumbing in a temporary repository that
// borrows the author's objects (`alternates`, so the author's repository is only read):
// same tree + same identity, date and message = the same commit id, so base_commit is known
// before any build. The image receives it as a git bundle (a pack of exactly that commit and
// its tree: every byte, mode and symlink as committed, no .gitattributes conversion on the
// way in) and checks its HEAD against the id computed here, so a mismatch fails the build.
//
// A submodule can be vendored (import swebench, when --repos holds its mirror): its gitlink is
// replaced by the tree of the submodule's commit, read from the mirror (another alternate),
// so the snapshot holds its files as ordinary tracked files; the message names each one.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProctorError } from '../errors.js';
import { git, gitDirOf, gitText } from './git.js';

/** The name of the snapshot inside environment/. */
export const SNAPSHOT_FILE = 'proctor-base.bundle';
const SNAPSHOT_REF = 'refs/heads/proctor-base';

/** 1980-01-01T00:00:00Z, Proctor's SOURCE_DATE_EPOCH: the snapshot's author and commit date. */
const SNAPSHOT_DATE = '315532800 +0000';
const IDENTITY = { name: 'Proctor', email: 'proctor@localhost' };

export interface Snapshot {
  /** The id of the one-commit snapshot: the bundle's base_commit. */
  commit: string;
  /** The upstream commit it was made from. */
  upstream: string;
}

/** A submodule whose files the snapshot holds in place of its gitlink. */
export interface VendoredSubmodule {
  /** Its path in the snapshot's tree (a nested one's path includes its parent's). */
  path: string;
  /** The repository (a work tree or a bare mirror) that holds `commit`. */
  repo: string;
  /** The gitlink's commit. */
  commit: string;
}

/**
 * The fixed message of the snapshot commit; it names the upstream commit, and each vendored
 * submodule's path and commit.
 */
export const snapshotMessage = (upstream: string, vendored: readonly VendoredSubmodule[] = []) =>
  `Proctor snapshot of ${upstream}\n` +
  (vendored.length === 0
    ? ''
    : `\n${vendored.map((v) => `Vendored submodule ${v.path} at ${v.commit}\n`).join('')}`);

/**
 * The tree of `upstream` with each vendored submodule's gitlink replaced by its commit's tree,
 * built in a temporary index (parents before their nested submodules). Plumbing that wants a
 * work tree gets an empty one it never writes to.
 */
async function vendoredTree(
  dir: string,
  temp: string,
  upstream: string,
  vendored: readonly VendoredSubmodule[],
): Promise<string> {
  const empty = join(temp, 'empty');
  mkdirSync(empty);
  // A submodule's path is a path, never a pathspec (`*`, `:(glob)`).
  const env = { GIT_INDEX_FILE: join(temp, 'index'), GIT_LITERAL_PATHSPECS: '1' };
  const run = (args: string[]) =>
    gitText(dir, [`--git-dir=${dir}`, `--work-tree=${empty}`, ...args], { env });
  await run(['read-tree', upstream]);
  for (const v of vendored) {
    const entry = await run(['ls-files', '-s', '--', v.path]);
    if (!entry.startsWith('160000 ')) {
      throw new ProctorError('USAGE', `${upstream}: ${v.path} is not a submodule in its tree`);
    }
    await run(['update-index', '--force-remove', '--', v.path]);
    await run(['read-tree', `--prefix=${v.path}/`, `${v.commit}^{tree}`]);
  }
  return run(['write-tree']);
}

/**
 * Makes the snapshot commit of `upstream` (a commit of `repo`) and writes it as a git bundle
 * to `bundlePath`. The author's repository is not written to.
 */
export async function makeSnapshot(
  repo: string,
  upstream: string,
  bundlePath: string,
  /** Submodules whose files replace their gitlinks, parents first. */
  vendored: readonly VendoredSubmodule[] = [],
): Promise<Snapshot> {
  const objects = [
    ...new Set(
      await Promise.all(
        [repo, ...vendored.map((v) => v.repo)].map(async (r) => join(await gitDirOf(r), 'objects')),
      ),
    ),
  ];
  const temp = mkdtempSync(join(tmpdir(), 'proctor-snapshot-'));
  try {
    const dir = join(temp, 'snapshot.git');
    await git(temp, ['init', '-q', '--bare', dir]);
    writeFileSync(
      join(dir, 'objects', 'info', 'alternates'),
      objects.map((o) => `${o}\n`).join(''),
    );
    const env = {
      GIT_AUTHOR_NAME: IDENTITY.name,
      GIT_AUTHOR_EMAIL: IDENTITY.email,
      GIT_AUTHOR_DATE: SNAPSHOT_DATE,
      GIT_COMMITTER_NAME: IDENTITY.name,
      GIT_COMMITTER_EMAIL: IDENTITY.email,
      GIT_COMMITTER_DATE: SNAPSHOT_DATE,
    };
    const tree =
      vendored.length === 0
        ? await gitText(dir, ['rev-parse', '--verify', `${upstream}^{tree}`])
        : await vendoredTree(dir, temp, upstream, vendored);
    const commit = await gitText(
      dir,
      ['commit-tree', '--no-gpg-sign', '-m', snapshotMessage(upstream, vendored).trimEnd(), tree],
      { env },
    );
    await git(dir, ['update-ref', SNAPSHOT_REF, commit]);
    // Level 1: the pack is read once, by the image build; speed matters more than its size.
    await git(dir, [
      '-c',
      'pack.compression=1',
      'bundle',
      'create',
      '-q',
      bundlePath,
      SNAPSHOT_REF,
    ]);
    return { commit, upstream };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

// The block appended to the author's Dockerfile. `USER root` because the author's image may
// end as another user; the sandbox sets its own uid for every container anyway. Git is
// Proctor's need, not the project's (the snapshot is unpacked with it here, and every
// workspace is made with the image's git), so an image without it gets Debian's or Alpine's
// package, in a layer of its own that the engine reuses for every snapshot of the same
// environment; an image with neither package manager is refused with one line saying why.
// The global config of one line lets root's git work in a tree the Dockerfile gave another
// user: git with the ownership check refuses it otherwise, and older git (bullseye's 2.30)
// honours safe.directory only there, and reads HOME's config whatever GIT_CONFIG_GLOBAL says.
function snapshotStage(workdir: string, commit: string): string {
  const dir = `'${workdir}'`;
  return [
    '',
    '# ---- added by Proctor: the base commit as one commit (see proctor derive --help) ----',
    'USER root',
    'RUN if ! command -v git >/dev/null; then \\',
    '      if command -v apt-get >/dev/null; then \\',
    '        echo "proctor: note: the environment has no git; installing Debian\'s" \\',
    '        && apt-get update -qq \\',
    '        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git >/dev/null \\',
    '        && rm -rf /var/lib/apt/lists/*; \\',
    '      elif command -v apk >/dev/null; then \\',
    '        echo "proctor: note: the environment has no git; installing Alpine\'s" && apk add -q --no-cache git; \\',
    '      else \\',
    '        echo "proctor: the environment needs git: install it in the Dockerfile" >&2; exit 1; \\',
    '      fi; \\',
    '    fi',
    `COPY ${SNAPSHOT_FILE} /${SNAPSHOT_FILE}`,
    'RUN set -e; export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp/proctor-home; \\',
    `    mkdir -p "$HOME"; printf '[safe]\\n\\tdirectory = *\\n' > "$HOME/.gitconfig"; \\`,
    `    mkdir -p ${dir}; cd ${dir}; git init -q; \\`,
    `    git fetch -q /${SNAPSHOT_FILE} ${SNAPSHOT_REF}; git reset -q --hard FETCH_HEAD; \\`,
    `    rm /${SNAPSHOT_FILE}; head=$(git rev-parse HEAD); rm -r "$HOME"; \\`,
    `    [ "$head" = ${commit} ] || { echo "proctor: HEAD is $head, expected ${commit}" >&2; exit 1; }`,
    `WORKDIR ${dir}`,
    '',
  ].join('\n');
}

/**
 * Writes a bundle's environment/ into `target` (which must not exist): a copy of the author's
 * build context, its Dockerfile with the snapshot stage appended, and the snapshot itself.
 */
export async function writeEnvironment(
  context: string,
  target: string,
  repo: string,
  upstream: string,
  workdir: string,
  /** Top-level entries of `context` not to copy (other repositories' contexts). */
  skip: readonly string[] = [],
  /** Submodules whose files the snapshot holds (makeSnapshot). */
  vendored: readonly VendoredSubmodule[] = [],
): Promise<Snapshot> {
  const dockerfile = join(context, 'Dockerfile');
  if (!existsSync(dockerfile)) {
    throw new ProctorError('USAGE', `--environment ${context}: no Dockerfile in it`);
  }
  const skipped = new Set(skip.map((name) => join(context, name)));
  cpSync(context, target, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !skipped.has(source),
  });
  const snapshot = await makeSnapshot(repo, upstream, join(target, SNAPSHOT_FILE), vendored);
  const text = readFileSync(dockerfile, 'utf8');
  writeFileSync(
    join(target, 'Dockerfile'),
    `${text.trimEnd()}\n${snapshotStage(workdir, snapshot.commit)}`,
  );
  // An author's .dockerignore must not keep the snapshot out of the build.
  const ignore = join(target, '.dockerignore');
  if (existsSync(ignore)) {
    writeFileSync(ignore, `${readFileSync(ignore, 'utf8').trimEnd()}\n!${SNAPSHOT_FILE}\n`);
  }
  return snapshot;
}
