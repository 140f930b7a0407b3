import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { capturePatch, type CaptureSpec } from '../../src/sandbox/capture.js';
import { hardenedContainerOptions } from '../../src/sandbox/profile.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { execFileAsync, testDocker, fixtureWorkspace } from '../helpers/docker.js';

const docker = testDocker();

/** A solver container on a fresh workspace; `edit` runs a shell script in it as the solver. */
async function solver() {
  const { image, base, owner, volume } = await fixtureWorkspace(docker, 'capture');
  const container = await docker.createContainer(
    hardenedContainerOptions({
      owner,
      role: 'solver',
      image,
      cmd: ['sleep', 'infinity'],
      uid: 1000,
      gid: 1000,
      workdir: '/workspace',
      workspace: { volume, target: '/workspace' },
    }),
  );
  await container.start();
  const edit = (script: string) =>
    execFileAsync('docker', ['exec', container.id, 'sh', '-c', `set -e; ${script}`]);
  const spec = (extra: Partial<CaptureSpec> = {}): CaptureSpec => ({
    owner,
    image,
    repoPath: '/repo',
    baseCommit: base,
    volume,
    solverContainerId: container.id,
    uid: 1000,
    gid: 1000,
    patchBytes: 1024 * 1024,
    candidateFiles: 200,
    ...extra,
  });
  /** Applies a patch to a fresh evaluator workspace and lists the result. */
  const applyFresh = async (patch: Buffer, script: string) => {
    const fresh = await createWorkspace(docker, {
      owner,
      role: 'evaluator',
      image,
      repoPath: '/repo',
      baseCommit: base,
      uid: 1000,
      gid: 1000,
    });
    const encoded = patch.toString('base64');
    const result = await runToCompletion(
      docker,
      {
        owner,
        role: 'probe',
        image,
        uid: 1000,
        gid: 1000,
        workdir: '/workspace',
        workspace: { volume: fresh, target: '/workspace' },
        env: { HOME: '/tmp', P: encoded },
        cmd: [
          'sh',
          '-c',
          `set -e; printf %s "$P" | base64 -d > /tmp/p; git -c safe.directory='*' apply --check /tmp/p; git -c safe.directory='*' apply /tmp/p; ${script}`,
        ],
      },
      { timeoutMs: 60_000 },
    );
    return result;
  };
  return { container, edit, spec, applyFresh, base };
}

describe('patch capture', () => {
  it('captures edits, additions, deletions, modes and binary files as a full-index binary patch that applies', async () => {
    const s = await solver();
    await s.edit(
      "echo changed >> a.txt; printf 'new\\n' > added.txt; rm sub/b.txt; chmod -x run.sh; head -c 3000 /dev/urandom > blob.bin; mkdir -p deep/er; echo x > deep/er/f.txt",
    );
    const captured = await capturePatch(docker, s.spec());
    expect((await s.container.inspect()).State.Paused).toBe(true);
    const text = captured.patch.toString('latin1');
    expect(captured.files).toBe(6);
    expect(text).toMatch(/^index [0-9a-f]{40}\.\.[0-9a-f]{40}/m);
    expect(text).toContain('GIT binary patch');
    expect(captured.sha256).toMatch(/^[0-9a-f]{64}$/);
    const applied = await s.applyFresh(
      captured.patch,
      'cat a.txt added.txt deep/er/f.txt; test ! -e sub/b.txt && echo gone; test -x run.sh || echo not-exec; wc -c < blob.bin',
    );
    expect(applied.stderr).toBe('');
    expect(applied.stdout.trim().split('\n')).toEqual([
      'one',
      'changed',
      'new',
      'x',
      'gone',
      'not-exec',
      '3000',
    ]);
  });

  it('is unchanged by tampering inside the candidate .git and by .gitattributes', async () => {
    const s = await solver();
    await s.edit('echo changed >> a.txt');
    const clean = await capturePatch(docker, s.spec());
    await s.container.unpause();
    await s.edit(
      [
        "printf '#!/bin/sh\\necho HOOK >&2; exit 1\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        'git config core.pager "sed s/changed/PAGER/"',
        'git config diff.external /bin/false',
        'git config diff.evil.textconv "sed s/changed/TEXTCONV/"',
        "printf '* diff=evil\\n*.txt filter=evil text eol=crlf\\n' > .git/info/attributes",
        "git config filter.evil.clean 'sed s/changed/FILTER/'",
        // a replaced object: a.txt's base blob replaced with another in the candidate's store
        `git replace -f $(git rev-parse ${s.base}:a.txt) $(echo REPLACED | git hash-object -w --stdin)`,
      ].join('; '),
    );
    const tampered = await capturePatch(docker, s.spec());
    expect(tampered.patch.equals(clean.patch)).toBe(true);

    // .gitattributes in the tree is candidate content: captured as a file, never obeyed.
    await s.container.unpause();
    await s.edit("printf '*.txt filter=evil text eol=crlf diff=evil\\n' > .gitattributes");
    const withAttributes = await capturePatch(docker, s.spec());
    expect(withAttributes.files).toBe(2);
    expect(withAttributes.patch.toString()).toContain('+changed');
    expect(withAttributes.patch.toString()).not.toMatch(/FILTER|TEXTCONV|PAGER|\r/);
  });

  it('rejects symlinks and nested repositories, too many files, and a patch over patch_bytes', async () => {
    const s = await solver();
    await s.edit('ln -s /etc/passwd link');
    await expect(capturePatch(docker, s.spec())).rejects.toSatisfy(
      (e) =>
        isProctorError(e, 'CANDIDATE_REJECTED') &&
        (e as Error).message.includes('symlink not allowed: link'),
    );
    const allowed = await capturePatch(docker, s.spec({ allowSymlinks: true }));
    expect(allowed.patch.toString()).toContain('new file mode 120000');

    const t = await solver();
    await t.edit(
      'mkdir nested; cd nested; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m x',
    );
    await expect(capturePatch(docker, t.spec())).rejects.toSatisfy((e) =>
      (e as Error).message.includes('gitlink (nested repository) not allowed'),
    );

    const u = await solver();
    await u.edit('for i in $(seq 1 12); do echo $i > f$i; done');
    await expect(capturePatch(docker, u.spec({ candidateFiles: 10 }))).rejects.toSatisfy((e) =>
      (e as Error).message.includes('changes 12 files, more than 10'),
    );
    await expect(capturePatch(docker, u.spec({ patchBytes: 200 }))).rejects.toSatisfy(
      (e) =>
        isProctorError(e, 'CANDIDATE_REJECTED') &&
        (e as Error).message.includes('larger than patch_bytes (200 bytes)'),
    );
  });

  it('captures an empty patch when nothing changed', async () => {
    const s = await solver();
    const captured = await capturePatch(docker, s.spec());
    expect(captured).toMatchObject({
      files: 0,
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    });
  });
});
