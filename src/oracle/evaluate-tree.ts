// The work tree's git for the run that holds the hidden tests: the last preparation before it,
// after the hidden test patch (and anything a trusted step adds to the hidden tests) is in the
// tree. Before it, the checkout's git told the hidden tests from the rest: HEAD and the index
// were the base commit's, so `git status` named the hidden test files and `git diff` showed
// their lines. commitTestTree makes the checkout's repository anew with one commit of the
// tree as it is, less the candidate's own changes (TREE_SCRIPT says how): the hidden tests are
// tracked and committed like the existing ones, and what git shows as changed is the
// candidate's diff, which its own code knows already. Tests that read git (status, ls-files,
// log, show HEAD:path) keep working; a runner that reads its test configuration from HEAD
// still reads the base commit's (the candidate's changes are not in HEAD).
import { TEMPLATE_MOUNT } from '../sandbox/index.js';
import { ASSET, TREE_SCRIPT, TREE_TIMEOUT_MS, asset } from './evaluate-scripts.js';
import {
  checkAborted,
  commandRecord,
  lastLines,
  type CommandRecord,
  type PhaseContext,
} from './evaluate-phase.js';
import { failVerdict, type Verdict } from './verdict.js';

export interface TestTree {
  record: CommandRecord;
  /** Set when the repository could not be made: the run ends here. */
  verdict?: Verdict;
}

/**
 * Commits the checkout's tree in a fresh repository (TREE_SCRIPT), as the task uid while no
 * process of the task runs. `candidate`: whether a candidate diff was applied (its asset is
 * then read in reverse, so that HEAD holds none of it).
 */
export async function commitTestTree(phase: PhaseContext, candidate: boolean): Promise<TestTree> {
  const { exec, timed, signal } = phase;
  const run = await timed('test_tree', () =>
    exec(
      [
        'sh',
        '-c',
        TREE_SCRIPT,
        'proctor-tree',
        candidate ? asset(ASSET.candidate) : '',
        TEMPLATE_MOUNT,
      ],
      TREE_TIMEOUT_MS,
    ),
  );
  checkAborted(signal, run);
  const record = commandRecord(run);
  if (run.exitCode === 0) return { record };
  const why = run.timedOut
    ? 'it did not finish in time'
    : lastLines(run.stderr) || `exit code ${String(run.exitCode)}`;
  return {
    record,
    verdict: failVerdict(
      'INFRA_ERROR',
      `the checkout's repository could not be made for the hidden tests: ${why}`,
    ),
  };
}
