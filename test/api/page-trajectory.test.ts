// An agent solve's trajectory on the status page, in a real headless Chromium over the real API
// on 127.0.0.1 with a real SQLite store and artifact store: the trajectory is recorded by the
// real model proxy (a scripted provider behind it, an OpenAI client in front) and stored as the
// solve worker stores it. The page lists its steps with their totals and stop, opens a step onto
// the model's messages, tool calls or error, shows the markup planted in them as text, pages a
// long trajectory like the oracle log, and says when a job has none. Also the API route it
// reads, /api/jobs/:id/trajectory/steps, with its bad inputs.
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { MAX_TRAJECTORY_VIEW_BYTES, answers } from '../../src/api/schemas.js';
import { manualClock } from '../../src/clock.js';
import type { Trajectory } from '../../src/proxy/index.js';
import { createRecorder } from '../../src/proxy/recorder.js';
import type { SqliteJobStore } from '../../src/queue/index.js';
import { createArtifactStore, createRedactor, type ArtifactStore } from '../../src/store/index.js';
import { startTestProxy } from '../helpers/model-proxy.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { startProtocolServer } from '../helpers/protocol-server.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sk-proj-REALKEY0123456789abcdefREALKEY';
const PRICES = { input: 2, cachedInput: 0.5, output: 8 };
/** Planted in the model's answer and in a tool call's arguments: must stay text. */
const MESSAGE_MARKUP =
  '<script>console.error("injected script")</script><img src=x onerror="console.error(\'injected img\')"><b>bold</b>';
const ARGUMENT_MARKUP = '<img src=y onerror="console.error(\'injected argument\')">';

async function setup() {
  const clock = manualClock();
  const store = tempStore({ clock });
  const artifacts = createArtifactStore({
    root: join(tempDir(), 'artifacts'),
    clock,
    redactor: createRedactor(),
  });
  const url = await listen({ store, artifacts, clock });
  return { clock, store, artifacts, url };
}

/** A finished solve job with `trajectory` stored as the solve worker stores it. */
async function solveWith(store: SqliteJobStore, artifacts: ArtifactStore, bytes: string | null) {
  const { job } = await store.enqueue({
    kind: 'solve',
    payload: { bundle: '/suite/t1', solver: 'agent' },
  });
  const [claimed] = await store.claim('solve', 'w1', 1, 60_000);
  if (!claimed || claimed.id !== job.id) throw new Error('the solve job was not claimed');
  const transcript = await artifacts.write({
    name: 'transcript.json',
    mediaType: 'application/json',
    bytes: '{"events": []}\n',
  });
  const records = [transcript];
  if (bytes !== null) {
    // As src/workers/solve-job.ts writes it.
    records.push(
      await artifacts.write({ name: 'trajectory.json', mediaType: 'application/json', bytes }),
    );
  }
  await store.complete(
    claimed,
    {
      verdict: 'PASS',
      reason: 'SOLVER_DONE',
      detail: 'the agent made a patch',
      transcript: transcript.id,
      ...(records[1] ? { trajectory: records[1].id } : {}),
    },
    records,
  );
  return job.id;
}

const stored = (trajectory: Trajectory) => `${JSON.stringify(trajectory, null, 1)}\n`;

/** Two turns through the real model proxy (a tool call, then text), and a third it refuses. */
async function recordedTrajectory(): Promise<Trajectory> {
  const upstream = await startProtocolServer([
    { toolCall: { name: 'run_shell', arguments: { cmd: ARGUMENT_MARKUP }, id: 'call_1' } },
    { text: MESSAGE_MARKUP },
  ]);
  const { proxy, baseUrl } = await startTestProxy({
    upstream: { baseUrl: upstream.baseUrl, apiKey: KEY, model: 'gpt-real' },
    prices: PRICES,
    limits: { maxTurns: 2 },
  });
  const sdk = new OpenAI({ baseURL: baseUrl, apiKey: proxy.token, maxRetries: 0 });
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'run_shell', parameters: { type: 'object' } } },
  ];
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'fix the bug' },
    { role: 'user', content: 'tests fail' },
  ];
  const first = await sdk.chat.completions.create({ model: 'agent-model', messages, tools });
  const call = first.choices[0]?.message;
  if (!call) throw new Error('no first answer');
  messages.push(call, { role: 'tool', tool_call_id: 'call_1', content: 'ok' });
  await sdk.chat.completions.create({ model: 'agent-model', messages, tools });
  const refused = await sdk.chat.completions.create({ model: 'agent-model', messages, tools }).then(
    () => 200,
    (e: { status?: number }) => e.status,
  );
  expect(refused).toBe(429);
  return proxy.trajectory();
}

/** `count` steps through the proxy's real recorder, without the HTTP in front of it. */
function longTrajectory(count: number): Trajectory {
  const recorder = createRecorder([]);
  for (let i = 0; i < count; i++) {
    const index = recorder.nextIndex();
    recorder.record(index, {
      protocol: 'openai-chat',
      startMs: i * 10,
      firstByteMs: 5,
      durationMs: 8,
      requestedModel: 'm',
      model: 'm',
      stream: false,
      input: [{ role: 'user', content: `question ${index}` }],
      tools: [],
      output: [{ role: 'assistant', content: `answer ${index}` }],
      finishReason: 'stop',
      usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 1 },
      costUsd: null,
      status: 200,
      outcome: 'ok',
      error: null,
    });
  }
  return recorder.trajectory(
    {
      turns: count,
      usage: { inputTokens: 10 * count, cachedInputTokens: 0, outputTokens: count },
      costUsd: null,
    },
    null,
  );
}

async function openJob(page: Page, id: number) {
  await page.locator('#all-jobs').click();
  const row = page.locator(`#jobs tbody tr[data-job-id="${id}"]`);
  await row.getByRole('button', { name: `#${id}` }).click();
  await waitForText(page.locator('#job-title'), `Job #${id} · solve`);
}

const stepRow = (page: Page, index: number) =>
  page.locator(`#trajectory-steps tr.step[data-step="${index}"]`);
const detailRow = (page: Page, index: number) =>
  page.locator(`#trajectory-steps tr.step-detail[data-step="${index}"]`);

describe("the status page's trajectory view", () => {
  it('lists the steps with totals and stop, opens each onto its answer, and shows planted markup as text', async () => {
    const { store, artifacts, url } = await setup();
    const trajectory = await recordedTrajectory();
    const [one, two, three] = trajectory.steps;
    if (!one || !two || !three) throw new Error('three steps were not recorded');
    const solve = await solveWith(store, artifacts, stored(trajectory));
    const none = await solveWith(store, artifacts, null);

    const { page, problems } = await openPage(url);
    await openJob(page, solve);
    const note = page.locator('#trajectory-note');
    await waitFor(async () => (await note.textContent())?.startsWith('trajectory.json, ') === true);
    expect(await page.locator('#trajectory').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Show trajectory' }).click();
    await waitForText(note, 'Steps 1–3 of 3 shown.');
    expect(await page.locator('#trajectory-open').isHidden()).toBe(true);
    expect(await page.locator('#trajectory-more').isHidden()).toBe(true);

    // The totals and the stop, at the top: two turns of 100 in, 20 out at $2 and $8 per 1M.
    const totals = await Promise.all(
      (await page.locator('#trajectory-totals tr').all()).map(async (row) => [
        await row.getAttribute('data-key'),
        await row.locator('td').textContent(),
      ]),
    );
    expect(trajectory.stop).toMatchObject({ reason: 'BUDGET_EXCEEDED', limit: 'turns' });
    expect(totals).toEqual([
      ['turns', '2 (3 request(s))'],
      ['tokens', '200 in, 40 out'],
      ['cost', '$0.0007'],
      ['stop', `BUDGET_EXCEEDED (turns): ${trajectory.stop?.detail}`],
    ]);

    // One row per step: index, protocol, model, outcome, status, tokens in/out, cost, duration.
    const cells = (index: number) => stepRow(page, index).locator('td').allTextContents();
    const ms = (step: { durationMs: number }) =>
      step.durationMs < 1000 ? `${Math.round(step.durationMs)} ms` : /s$/;
    expect(await cells(1)).toEqual([
      '▸ 1',
      'openai-chat',
      'gpt-real',
      'ok',
      '200',
      '100',
      '20',
      '$0.0004',
      ms(one),
    ]);
    expect((await cells(2)).slice(0, 8)).toEqual([
      '▸ 2',
      'openai-chat',
      'gpt-real',
      'ok',
      '200',
      '100',
      '20',
      '$0.0004',
    ]);
    expect(three).toMatchObject({ outcome: 'refused', status: 429, usage: null });
    expect((await cells(3)).slice(0, 8)).toEqual([
      '▸ 3',
      'openai-chat',
      '–',
      'refused',
      '429',
      '?',
      '?',
      '?',
    ]);

    // Step 1 opens onto its tool call: the name, and the arguments as the model wrote them.
    expect(await detailRow(page, 1).count()).toBe(0);
    await stepRow(page, 1).getByRole('button', { name: '▸ 1' }).click();
    const call = detailRow(page, 1).locator('.tool-call');
    expect(await call.locator('.tool-name').textContent()).toBe('run_shell');
    expect(await call.locator('pre.tool-arguments').textContent()).toBe(
      JSON.stringify({ cmd: ARGUMENT_MARKUP }),
    );
    expect(await detailRow(page, 1).locator('.note').first().textContent()).toContain(
      'asked for agent-model · finish: tool_calls',
    );
    // Step 2 opens onto the model's message, the planted markup as its very text.
    await stepRow(page, 2).getByRole('button', { name: '▸ 2' }).click();
    const message = detailRow(page, 2).locator('.message.role-assistant');
    expect(await message.locator('.role').textContent()).toBe('assistant');
    expect(await message.locator('pre.content').textContent()).toBe(MESSAGE_MARKUP);
    // Step 3 opens onto why the proxy refused it (it sent nothing, so it names no model).
    await stepRow(page, 3).getByRole('button', { name: '▸ 3' }).click();
    expect(await detailRow(page, 3).locator('.note').first().textContent()).toBe(
      'asked for agent-model',
    );
    expect(three.error).toBeTruthy();
    expect(await detailRow(page, 3).locator('.step-error').textContent()).toBe(
      `Error: ${three.error}`,
    );
    // Nothing planted became an element, and nothing ran (the collected problems are empty).
    const planted = page.locator('#trajectory img, #trajectory script, #trajectory b');
    expect(await planted.count()).toBe(0);
    expect(await page.locator('img').count()).toBe(0);

    // A step closes again, and a refresh keeps what is open.
    await stepRow(page, 1).getByRole('button', { name: '▾ 1' }).click();
    expect(await detailRow(page, 1).isHidden()).toBe(true);
    const status = page.locator('#status');
    const before = await status.textContent();
    await waitFor(async () => (await status.textContent()) !== before, { what: 'a refresh' });
    expect(await detailRow(page, 2).isVisible()).toBe(true);

    // A job without a trajectory says so, and offers nothing to open.
    await page.locator(`#jobs tbody tr[data-job-id="${none}"]`).getByRole('button').click();
    await waitForText(page.locator('#job-title'), `Job #${none} · solve`);
    await waitForText(note, 'No trajectory for this job (only agent solves have one).');
    expect(await page.locator('#trajectory-open').isHidden()).toBe(true);
    expect(await page.locator('#trajectory').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  }, 60_000);

  it('pages a long trajectory 100 steps at a time and keeps at most 1000, saying how many are left', async () => {
    const { store, artifacts, url } = await setup();
    const trajectory = longTrajectory(1150);
    const id = await solveWith(store, artifacts, stored(trajectory));
    const { page, problems } = await openPage(url);
    await openJob(page, id);
    await page.getByRole('button', { name: 'Show trajectory' }).click();
    const note = page.locator('#trajectory-note');
    await waitForText(note, 'Steps 1–100 of 1150 shown; 1050 more not loaded.');
    const rows = page.locator('#trajectory-steps tr.step');
    expect(await rows.count()).toBe(100);
    const more = page.getByRole('button', { name: 'Load more steps' });
    await more.click();
    await waitForText(note, 'Steps 1–200 of 1150 shown; 950 more not loaded.');
    for (let loaded = 300; loaded <= 1000; loaded += 100) {
      await more.click();
      await waitForText(note, `Steps 1–${loaded} of 1150 shown; ${1150 - loaded} more not loaded.`);
    }
    // Past 1000 rows the oldest steps go, like the oldest text of the oracle log.
    await more.click();
    await waitForText(
      note,
      'Steps 101–1100 of 1150 shown; 50 more not loaded (earlier steps dropped).',
    );
    expect(await rows.count()).toBe(1000);
    expect(await rows.first().getAttribute('data-step')).toBe('101');
    await more.click();
    await waitForText(note, 'Steps 151–1150 of 1150 shown (earlier steps dropped).');
    expect(await more.isHidden()).toBe(true);
    expect(await rows.last().getAttribute('data-step')).toBe('1150');
    expect(problems).toEqual([]);
  }, 90_000);
});

describe('GET /api/jobs/:id/trajectory/steps', () => {
  it('answers the totals, the stop and a page of steps, and refuses what it cannot answer', async () => {
    const { store, artifacts, url } = await setup();
    const trajectory = longTrajectory(5);
    const id = await solveWith(store, artifacts, stored(trajectory));
    const get = async (path: string) => {
      const response = await fetch(new URL(path, url));
      const body = (await response.json()) as Record<string, unknown> & {
        error: { code: string; message: string };
      };
      return { status: response.status, body };
    };

    const first = await get(`/api/jobs/${id}/trajectory/steps?limit=2`);
    expect(first.status).toBe(200);
    answers.trajectorySteps.parse(first.body);
    expect(first.body).toMatchObject({
      totals: trajectory.totals,
      stop: null,
      droppedSteps: 0,
      stepCount: 5,
      offset: 0,
      nextOffset: 2,
    });
    expect(first.body['steps']).toEqual(trajectory.steps.slice(0, 2));
    const last = await get(`/api/jobs/${id}/trajectory/steps?offset=4&limit=2`);
    expect(last.body).toMatchObject({ offset: 4, nextOffset: null });
    expect(last.body['steps']).toEqual(trajectory.steps.slice(4));
    const past = await get(`/api/jobs/${id}/trajectory/steps?offset=99`);
    expect(past.body).toMatchObject({ offset: 5, steps: [], nextOffset: null });

    for (const bad of ['limit=0', 'limit=201', 'offset=-1', 'offset=1e3', 'from=1']) {
      const answer = await get(`/api/jobs/${id}/trajectory/steps?${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body['error'].code, bad).toBe('PAYLOAD_INVALID');
    }
    expect((await get('/api/jobs/999/trajectory/steps')).body['error']).toMatchObject({
      code: 'JOB_NOT_FOUND',
      message: 'no job 999',
    });
    const bare = await solveWith(store, artifacts, null);
    const missing = await get(`/api/jobs/${bare}/trajectory/steps`);
    expect(missing.status).toBe(404);
    expect(missing.body['error']).toMatchObject({
      code: 'ARTIFACT_NOT_FOUND',
      message: `job ${bare} has no trajectory`,
    });

    const broken = await solveWith(store, artifacts, '{"version": 2, "steps": []}\n');
    const wrong = await get(`/api/jobs/${broken}/trajectory/steps`);
    expect(wrong.status).toBe(500);
    expect(wrong.body['error'].code).toBe('ARTIFACT_INVALID');
    expect(wrong.body['error'].message).toMatch(
      new RegExp(
        `^the trajectory of job ${broken} \\(artifact [^)]+\\) is not a trajectory of version 1 at version: `,
      ),
    );

    const huge = await solveWith(
      store,
      artifacts,
      `{"version": 1, "steps": [], "pad": "${'x'.repeat(MAX_TRAJECTORY_VIEW_BYTES)}"}\n`,
    );
    const tooLarge = await get(`/api/jobs/${huge}/trajectory/steps`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body['error'].code).toBe('LIMIT_EXCEEDED');
    expect(tooLarge.body['error'].message).toContain(
      `more than the ${MAX_TRAJECTORY_VIEW_BYTES} the steps view reads; read it by slices from /api/jobs/${huge}/trajectory`,
    );
  }, 60_000);
});
