// The work tree's git for the run that holds the hidden tests: the last preparation before it,
// after the hidden test patch (and anything a trusted step adds to the hidden tests) is in the
// tree. Before it, the checkout's git told the hidden tests from the rest: HEAD and the index
// were the base commit's, so `git status` named the hidden test files and `git diff` showed
// their lines. TREE_SCRIPT makes the checkout's repository anew with one commit of the
// tree as it is, less the candidate's own changes (TREE_SCRIPT says how): the hidden tests are
// tracked and committed like the existing ones, and what git shows as changed is the
// candidate's diff, which its own code knows already. Tests that read git (status, ls-files,
// log, show HEAD:path) keep working; a runner that reads its test configuration from HEAD
// still reads the base commit's (the candidate's changes are not in HEAD).
// It runs as the last step of the hidden tests' preparation (evaluate-prepare.ts).
import { lastLines, type CommandRecord } from './evaluate-phase.js';
import { failVerdict, type Verdict } from './verdict.js';

export interface TestTree {
  record: CommandRecord;
  /** Set when the repository could not be made: the run ends here. */
  verdict?: Verdict;
}

/** What TREE_SCRIPT's run (its record) means for the evaluation. */
export function treeOutcome(record: CommandRecord): TestTree {
  if (record.exitCode === 0) return { record };
  const why = record.timedOut
    ? 'it did not finish in time'
    : lastLines(record.stderr) || `exit code ${String(record.exitCode)}`;
  return {
    record,
    verdict: failVerdict(
      'INFRA_ERROR',
      `the checkout's repository could not be made for the hidden tests: ${why}`,
    ),
  };
}
