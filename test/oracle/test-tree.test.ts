// The hidden run's repository (TREE_SCRIPT, evaluate-tree.ts) on the real engine, in a job's
// own container with its template mounted, over an overlay and over a copy: the template's
// index is its first index, so `git add -A` reads only the files whose size or mtime moved.
// A file the job left alone is not read at all (one made unreadable is still committed, from
// the template's objects), and every file a step wrote is: a new one, a deleted one, one
// rewritten at the same size in the same second as the template was made.
import { describe, expect, it } from 'vitest';
import { execInContainer } from '../../src/sandbox/exec.js';
import { removeContainer } from '../../src/sandbox/container.js';
import { createTemplateStore, TEMPLATE_MOUNT } from '../../src/sandbox/template.js';
import { startWithWorkspace, type WorkspaceContainer } from '../../src/sandbox/workspace-start.js';
import type { WorkspaceLayer } from '../../src/sandbox/overlay.js';
import { TREE_SCRIPT } from '../../src/oracle/evaluate-scripts.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'test-tree');
const SLOW = 120_000;

async function start(layer: WorkspaceLayer): Promise<WorkspaceContainer> {
  // The fixture's tree: a.txt ("one"), old.txt ("old", mtime 2001), .gitignore; a.out and
  // build/ ignored.
  const image = await fixtureImage('git-ignored');
  const started = await startWithWorkspace(docker, {
    owner: scope.templateOwner(),
    role: 'evaluator',
    image,
    repoPath: '/repo',
    baseCommit: await readFromImage(image, '/base_commit'),
    uid: 1000,
    gid: 1000,
    history: 'none',
    layer,
    ...(layer === 'copy' ? { medium: 'memory' as const } : {}),
    templates: createTemplateStore(),
    container: { workdir: '/repo', env: { HOME: '/tmp' } },
  });
  onCleanup(() => removeContainer(started.container).catch(() => undefined));
  return started;
}

async function sh(started: WorkspaceContainer, cmd: string[]) {
  const result = await execInContainer(docker, started.container.id, {
    cmd,
    user: '1000:1000',
    workdir: '/repo',
    timeoutMs: 60_000,
    outputBytes: 64 * 1024,
  });
  return result;
}

const tree = (started: WorkspaceContainer) =>
  sh(started, ['sh', '-c', TREE_SCRIPT, 'proctor-tree', '', TEMPLATE_MOUNT]);

const GIT = 'git -c safe.directory="*"';

describe.each(['overlay', 'copy'] as const)('the hidden run’s repository over a %s', (layer) => {
  it(
    'reads only what changed: an untouched file unreadable now is committed from the template, each written one as written',
    async () => {
      const started = await start(layer);
      const steps = await sh(started, [
        'sh',
        '-c',
        // Same size as "one\n", and at once: in the second the template's index was written
        // in, if the template was made just now.
        'set -e; chmod 000 old.txt; printf "two\\n" > a.txt; echo new > b.txt; rm .gitignore',
      ]);
      expect(steps.stderr).toBe('');
      const made = await tree(started);
      expect(made.stderr).toBe('');
      expect(made.exitCode).toBe(0);
      const seen = await sh(started, [
        'sh',
        '-c',
        [
          `${GIT} ls-files | paste -sd " " -`,
          `${GIT} show HEAD:a.txt HEAD:b.txt HEAD:old.txt`,
          `${GIT} status --porcelain | paste -sd " " -`,
          `${GIT} log --format=%s | paste -sd " " -`,
        ].join('; '),
      ]);
      expect(seen.stderr).toBe('');
      // a.out and build/ are untracked now that .gitignore is gone: the fresh repository's
      // `add -A` takes them, as it did before the index was the template's. `git status`
      // (every stat field compared) cannot read old.txt to see it unchanged.
      expect(seen.stdout.trim().split('\n')).toEqual([
        'a.out a.txt b.txt build/lib/ext.so old.txt',
        'two',
        'new',
        'old',
        ' M old.txt',
        'checkout',
      ]);
    },
    SLOW,
  );

  it(
    'commits a file changed at its size with its mtime put back as the base commit has it, unless racily clean',
    async () => {
      const started = await start(layer);
      const steps = await sh(started, [
        'sh',
        '-c',
        // old.txt is as old as the image's build (2001); a.txt, which the template's preparation
        // wrote back in the second its index was written, is racily clean and read anyway.
        'set -e; for f in old.txt a.txt; do cp -p $f /tmp/was; printf "odd\\n" > $f; touch -r /tmp/was $f; done',
      ]);
      expect(steps.stderr).toBe('');
      const made = await tree(started);
      expect(made.exitCode).toBe(0);
      const head = await sh(started, ['sh', '-c', `${GIT} show HEAD:old.txt HEAD:a.txt`]);
      expect(head.stdout).toBe('old\nodd\n');
    },
    SLOW,
  );
});
