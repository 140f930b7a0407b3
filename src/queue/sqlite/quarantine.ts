// A quarantine reaches every finished grade of its task, whichever came first. A grade reads
// its task's judgement before it completes; a baseline that quarantines the task after that
// read (a grade enqueued before its baseline, or running beside it) would leave the grade
// counted as resolved or unresolved for good. So the store marks them in the writes
// themselves: the baseline's completion marks the done grades (and failed solves) of the
// same task id and bundle content, and a grade's or solve's completion marks itself when the
// quarantine is already recorded. Marked: class invalid_task, and `quarantined` (the
// baseline's reason and job) in the result, as a grade that saw the quarantine records it;
// every view (report, status, the page, --format swebench) reads that stored class. SQLite has
// one writer, so one of the two transactions always sees the other.
//
// Only a quarantine marks: a later baseline that judges the same content valid changes no
// grade (a task once quarantined for a content stays suspect for the grades made meanwhile).
import type Database from 'better-sqlite3';

// The rows a quarantine applies to: finished grades, and solves that failed (a solve that
// passed is judged by its grade), that name the task and its content in their result.
const MARK = `
  UPDATE jobs SET outcome = 'invalid_task', updated_at = :now,
    result = json_set(result, '$.quarantined', json_object('reason', t.reason, 'job', t.job_id))
  FROM tasks t
  WHERE jobs.status = 'done' AND jobs.kind IN ('grade', 'solve')
    AND (jobs.kind = 'grade' OR json_extract(jobs.result, '$.verdict') IS NOT 'PASS')
    AND jobs.outcome IS NOT 'invalid_task'
    AND t.validity = 'quarantined'
    AND t.task_id = json_extract(jobs.result, '$.task.id')
    AND t.content_hash = json_extract(jobs.result, '$.task.contentHash')`;

export function createQuarantineOps(sqlite: Database.Database) {
  // The done jobs of status 'done' are walked through the (status, id) index.
  const ofTask = sqlite.prepare(
    `${MARK} AND t.task_id = :taskId AND t.content_hash = :contentHash`,
  );
  const ofJob = sqlite.prepare(`${MARK} AND jobs.id = :id`);
  return {
    /** After a quarantine of (taskId, contentHash) is recorded: marks its finished grades. */
    markTask(taskId: string, contentHash: string, now: number): number {
      return ofTask.run({ taskId, contentHash, now }).changes;
    },
    /** After a grade or solve completed: marks it when its task is already quarantined. */
    markJob(id: number, now: number): number {
      return ofJob.run({ id, now }).changes;
    },
  };
}
