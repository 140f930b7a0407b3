// The oracle: task bundles, candidate diff filtering, runner reports and verdicts, and
// validation. Grading knows no HTTP and no terminal.
export { loadBundle, loadBundleWithListing, loadSuite, readDescription } from './bundle.js';
export { declaredTestIds } from './declared-ids.js';
export type { DeclaredTestIds } from './declared-ids.js';
export { createFileDigests } from './file-digests.js';
export type { FileDigests } from './file-digests.js';
export type { Bundle, BundleLimits, LoadBundleOptions, Suite } from './bundle.js';
export { SOURCE_KEYS, sourceLine, taskRecord } from './task-source.js';
export { IMPOSSIBLE_MODES, contradictedTests } from './task-impossible.js';
export type { ImpossibleMode, ImpossibleRecord, TaskImpossible } from './task-impossible.js';
export type { SourceRecord, TaskRecord, TaskSource } from './task-source.js';
export { filterDiff, pathsTouchedBy, describeDropped } from './diff-filter.js';
export type { DiffRules, DropReason, DroppedChange, FilteredDiff } from './diff-filter.js';
export type { ChangeKind, FileChange } from './diff-parse.js';
export { MAX_SCREEN_HITS, SCREEN_RULES, screenDiff } from './screen.js';
export type { ScreenHit, ScreenResult, ScreenRule } from './screen.js';
export { parseReport, TEST_STATUSES } from './report.js';
export type { ParsedReport, ReportLimits, SwebenchStatus, TestStatus } from './report.js';
export {
  REASONS,
  checkPhase,
  decideBaseline,
  decideGrade,
  failVerdict,
  flakyTests,
  gateLine,
  passVerdict,
  testsHash,
} from './verdict.js';
export type {
  GradePhases,
  PhaseCheck,
  PhaseOutcome,
  Reason,
  TestOutcome,
  Verdict,
} from './verdict.js';
export { decideSwebenchBaseline, decideSwebenchGrade } from './swebench-verdict.js';
export { decideImpossibleBaseline } from './impossible-verdict.js';
export type { ImpossibleGold } from './impossible-verdict.js';
export { checkStatic, problemsOf } from './validate.js';
export {
  deniesConftest,
  integrityLayers,
  integrityWarnings,
  runnerRunsPytest,
  runsPytest,
} from './integrity.js';
export type { StaticResult } from './validate.js';
export { checkImage, validatePaths } from './validate-image.js';
export { coverageLines, type CanaryCoverage } from './canary-coverage.js';
export type {
  ImageCheck,
  ImageCheckDeps,
  ValidationDeps,
  ValidationResult,
} from './validate-image.js';
export {
  evaluate,
  prepareCandidate,
  DETERMINISTIC_ENV,
  EVALUATOR_PATHS,
  SOURCE_DATE_EPOCH,
} from './evaluate.js';
export type {
  Evaluation,
  EvaluateInput,
  EvaluatorSandbox,
  PhaseRecord,
  CandidateRecord,
} from './evaluate.js';
export { renderOracleLog, screenLines } from './oracle-log.js';
export { declaredTests, TEST_LISTS } from './test-statuses.js';
export type { DeclaredTest, DeclaredTests, ListState, TestList } from './test-statuses.js';
export type { OracleLogInput } from './oracle-log.js';
export { JEST_IDS_ENV } from './js-canary-step.js';
