// `proctor solve --agent FILE` with a user's own definition whose agent is a small shell script
// on the host (install.binary, test/helpers/fake-agent.ts): a crash, a hang past the deadline
// and an output flood each end the solve with its reason, the partial patch it left stored.
// (The batch cost cap with the same agent: agent-solve-cap.test.ts.)
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import {
  fakeAgentDefinition,
  fakeAgentSetup,
  fakeAgentSolves,
  fakeAgentSuite,
} from '../helpers/fake-agent.js';
import { allBytes, leftovers } from '../helpers/home.js';

const KEY = 'sk-agentendsplanted0123456789abcdefKEY';

describe('proctor solve --agent FILE: an agent that misbehaves', () => {
  it('ends a crash AGENT_CRASHED, a hang SOLVER_TIMEOUT and a flood AGENT_OUTPUT_FLOOD, each partial patch stored', async () => {
    const { dir, server } = await fakeAgentSetup(['[workers]', 'solve = 3']);
    const agent = fakeAgentDefinition(dir, ['fake-agent']);
    const result = await proctor(
      [
        '--home',
        dir,
        'solve',
        fakeAgentSuite(['crash', 'hang', 'flood']),
        '--solver',
        'byo',
        '--agent',
        agent,
        '--timeout',
        '30',
        '--wait',
      ],
      { PROCTOR_AGENT_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ends-crash\s+FAIL\s+AGENT_CRASHED\s/);
    expect(result.stdout).toMatch(/ends-hang\s+FAIL\s+SOLVER_TIMEOUT\s/);
    expect(result.stdout).toMatch(/ends-flood\s+FAIL\s+AGENT_OUTPUT_FLOOD\s/);
    const byTask = Object.fromEntries(
      (await fakeAgentSolves(dir, 3)).map((j) => [j.result!.task.id, j.result!]),
    );
    expect(byTask['ends-crash']).toMatchObject({
      reason: 'AGENT_CRASHED',
      end: { reason: 'agent_crashed' },
      detail: 'the agent exit 3: fatal: the model is unreachable',
      agent: { outcome: 'crashed', exitCode: 3 },
    });
    expect(byTask['ends-hang']).toMatchObject({
      reason: 'SOLVER_TIMEOUT',
      end: { reason: 'deadline' },
    });
    expect(byTask['ends-flood']).toMatchObject({
      reason: 'AGENT_OUTPUT_FLOOD',
      end: { reason: 'output_flood' },
      agent: { outcome: 'output_flood' },
    });
    for (const id of ['ends-crash', 'ends-hang', 'ends-flood']) {
      expect(byTask[id]?.candidate, id).toMatchObject({ files: 1 });
    }
    // The agent never asked for a model; nothing reached the provider.
    expect(server.requests).toHaveLength(0);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 900_000);
});
