// Results: what a batch came to — report rows per attempt, per-batch figures with their
// statistics, comparisons between batches, and the SWE-bench forms.
export { OUTCOME_CLASSES, outcomeOf } from './outcome.js';
export type { OutcomeClass } from './outcome.js';
export {
  Z95,
  mcnemarExact,
  pairedDifference,
  passAtK,
  passAtKTable,
  passHatK,
  percentile,
  wilson,
} from './stats.js';
export type {
  Interval,
  PairedCounts,
  PairedDifference,
  PassAtKFigure,
  Rate,
  TaskAttempts,
} from './stats.js';
export { AttemptCollector, attemptRows } from './rows.js';
export type { AttemptJob, ReportRow, Tokens } from './rows.js';
export { emptyClasses, summarise, taskClasses } from './summary.js';
export type { BatchSummary, ClassCounts, SummaryInput } from './summary.js';
export { compareBatches } from './compare.js';
export type { Comparison, Flip } from './compare.js';
export { loadBatch } from './load.js';
export type { BatchKind, LoadedBatch } from './load.js';
export { BaselineCollector, flakyFromDetail } from './baseline.js';
export type { BaselineRow, Validity } from './baseline.js';
export { BASELINE_TOP, compareBaselines, summariseBaseline } from './baseline-summary.js';
export type {
  BaselineComparison,
  BaselineState,
  BaselineSummary,
  BaselineTask,
} from './baseline-summary.js';
export {
  BASELINE_COLUMNS,
  baselineComparisonLines,
  baselineLines,
  flatBaselineRow,
} from './baseline-format.js';
export type { FlatBaselineRow } from './baseline-format.js';
export {
  instanceKey,
  instanceReport,
  instanceRows,
  isEmptyPatch,
  namedIds,
  storedTestsStatus,
  suiteInstanceKeys,
  swebenchSummary,
} from './swebench.js';
export type { InstanceReport, SwebenchSummary, TestSplit } from './swebench.js';
export {
  ROW_COLUMNS,
  comparisonLines,
  csvCell,
  flatRow,
  jsonlChunks,
  msText,
  rateText,
  summaryLines,
} from './format.js';
export type { FlatRow } from './format.js';
export { ARCHIVE_MTIME, reproducibleTarGz } from './archive.js';
export type { ArchiveEntry } from './archive.js';
export { MAX_EXPORT_BYTES, MAX_EXPORT_JOBS, exportJobs } from './export.js';
export type { ExportDeps, ExportOptions, ExportResult } from './export.js';
export { exportBatchJobs } from './export-batch.js';
export { checkComparable, hasBaselines, hasGrades, reportObject } from './report.js';
export type { ReportObject } from './report.js';
export {
  EXPECTED_SHAPES,
  MAX_OFFICIAL_INSTANCES,
  SHAPE_NAMES,
  parseInstanceReports,
  parseOfficial,
} from './official.js';
export type {
  Official,
  OfficialInstance,
  OfficialShape,
  OfficialStatus,
  OfficialTests,
} from './official.js';
export { cohensKappa, compareWithOfficial, disagreeingBundles, parityOfBatch } from './parity.js';
export type {
  Agreement,
  AgreementCounts,
  DeclaredIds,
  Disagreement,
  NotComparable,
  NotInSuite,
  Parity,
  TestDifference,
} from './parity.js';
export { PARITY_COLUMNS, kappaText, parityLines, parityRecords } from './parity-format.js';
export {
  MAX_LISTED_TESTS,
  MAX_STORED_TESTS_BYTES,
  decodeTestStatuses,
  encodeTestStatuses,
  expandTestStatuses,
  readTestStatuses,
  summariseTestStatuses,
  swebenchOf,
  swebenchSplit,
  swebenchSuccess,
  testsSummaryLines,
} from './test-statuses.js';
export type { ListSummary, StoredTestStatuses, TestsSummary } from './test-statuses.js';
