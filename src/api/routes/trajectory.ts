// An agent solve's trajectory (trajectory.json, src/proxy/trajectory.ts) as the page shows it:
// its totals and stop, and its steps a bounded page at a time. A byte slice of the file, which
// `/api/jobs/:id/trajectory` serves, cannot be parsed on its own, so this route reads the file
// whole (verified, and only up to MAX_TRAJECTORY_VIEW_BYTES) and answers the steps asked for.
import type { Hono } from 'hono';
import { ProctorError } from '../../errors.js';
import { trajectorySchema } from '../../proxy/trajectory.js';
import { parse, queryOf } from '../parse.js';
import { jobId, MAX_TRAJECTORY_VIEW_BYTES, trajectoryStepsQuery, type Answer } from '../schemas.js';
import type { RouteContext } from './context.js';

export function trajectoryRoutes(app: Hono, ctx: RouteContext): void {
  const { store, artifacts } = ctx;

  // Cached by URL while the store is unchanged: a trajectory is written once, with its job's
  // end, so paging back and forth parses the file once per page.
  app.get('/api/jobs/:id/trajectory/steps', (c) =>
    ctx.fresh(c, async () => {
      const id = parse(jobId, c.req.param('id'), 'id');
      const { offset, limit } = parse(trajectoryStepsQuery, queryOf(c), 'query');
      const job = await store.getJob(id);
      if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
      const stored = (await store.listArtifacts(id)).find((a) => a.name === 'trajectory.json');
      if (!stored) throw new ProctorError('ARTIFACT_NOT_FOUND', `job ${id} has no trajectory`);
      if (stored.size > MAX_TRAJECTORY_VIEW_BYTES) {
        throw new ProctorError(
          'LIMIT_EXCEEDED',
          `the trajectory of job ${id} is ${stored.size} bytes, more than the ${MAX_TRAJECTORY_VIEW_BYTES} the steps view reads; read it by slices from /api/jobs/${id}/trajectory`,
        );
      }
      const bytes = await artifacts.read(stored, { maxBytes: MAX_TRAJECTORY_VIEW_BYTES });
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        throw new ProctorError(
          'ARTIFACT_INVALID',
          `the trajectory of job ${id} (artifact ${stored.id}) is not JSON`,
          { cause: error },
        );
      }
      const parsed = trajectorySchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
        throw new ProctorError(
          'ARTIFACT_INVALID',
          `the trajectory of job ${id} (artifact ${stored.id}) is not a trajectory of version 1${at}: ${issue?.message ?? 'invalid'}`,
        );
      }
      const { steps, totals, stop, droppedSteps } = parsed.data;
      const start = Math.min(offset, steps.length);
      const end = Math.min(start + limit, steps.length);
      return {
        artifact: stored.id,
        size: stored.size,
        totals,
        stop,
        droppedSteps,
        stepCount: steps.length,
        offset: start,
        steps: steps.slice(start, end),
        nextOffset: end < steps.length ? end : null,
      } satisfies Answer<'trajectorySteps'>;
    }),
  );
}
