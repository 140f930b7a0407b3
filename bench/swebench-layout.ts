// How SWE-bench's harness lays out an instance image, as far as a build context can: the
// repository's own clone at /testbed, reset to the base commit, with no remote
// (make_repo_script_list_py), and the commit of the install's changes to tracked files on top
// of it. Used by the tests that build such images (test/helpers/swebench-layout.ts) and by
// `bench:import --pulled`, which re-lays a catalog environment out this way.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hostArch, instanceId1776 } from '../src/import/images.js';

/** SWE-bench's setup commit: the install's changes to tracked files, even none. */
export const SETUP_COMMIT =
  'git -c user.email=setup@swebench.config -c user.name=SWE-bench commit --allow-empty -q -am SWE-bench';

/** Clones `repo` into `context/testbed` at `base`, with no remote, for `COPY testbed /testbed`. */
export function testbedContext(context: string, repo: string, base: string): void {
  if (!existsSync(repo)) throw new Error(`no repository at ${repo} to clone into /testbed`);
  const testbed = join(context, 'testbed');
  execFileSync('git', ['clone', '-q', repo, testbed]);
  execFileSync('git', ['reset', '-q', '--hard', base], { cwd: testbed });
  execFileSync('git', ['remote', 'remove', 'origin'], { cwd: testbed });
}

/** SWE-bench's name of an instance's image, in the registry at `host`. */
export const sweName = (host: string, id: string) =>
  `${host}/swebench/sweb.eval.${hostArch()}.${instanceId1776(id)}:latest`;

/** The `--images` template of the names sweName gives, for `proctor import swebench`. */
export const sweTemplate = (host: string) =>
  `${host}/swebench/sweb.eval.{arch}.{instance_id_1776}:latest`;
