// A user's own agent definition whose agent is a small shell script on the host
// (install.binary), for `proctor solve --agent FILE` tests of how solves end: a home whose
// profile `byo` points at a scripted provider with the script beside it, and a suite of copies
// of the shell fixture task whose descriptions name what the script does (MODE-crash,
// MODE-hang, MODE-flood), or its first argument (`spend`: asks the model up to 20 times, until
// a request is refused).
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { proctor } from './cli.js';
import { ROOT } from './processes.js';
import { startProtocolServer, type ProtocolServer, type UpstreamStep } from './protocol-server.js';
import { tempDir } from './temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

// Each mode first leaves an edit in the work tree: the partial patch a failed solve still stores.
const AGENT = `#!/bin/sh
mode=$1
[ -n "$mode" ] || mode=$(cat | grep -o 'MODE-[a-z]*' | head -n 1)
echo partial > partial.txt
case $mode in
  MODE-crash) echo "fatal: the model is unreachable" >&2; exit 3 ;;
  MODE-hang) sleep 1000 ;;
  MODE-flood) yes "flood flood flood flood flood flood flood" ;;
  spend) exec /opt/proctor/node/bin/node -e '
    const ask = () => fetch(process.env.FAKE_BASE_URL + "/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer " + process.env.FAKE_API_KEY },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
    });
    (async () => {
      for (let i = 0; i < 20; i++) {
        const res = await ask();
        await res.text();
        console.log("answer", res.status);
        if (res.status !== 200) return;
      }
    })();' ;;
esac
`;

/** Writes the definition `fake.toml` into `dir` (install.binary `fake-agent`); its path. */
export function fakeAgentDefinition(dir: string, command: string[]): string {
  const path = join(dir, 'fake.toml');
  writeFileSync(
    path,
    [
      'name = "fake-ends"',
      'protocol = "openai-chat"',
      'prompt = "stdin"',
      `command = ${JSON.stringify(command)}`,
      '[install]',
      'binary = "fake-agent"',
      '[env]',
      'FAKE_BASE_URL = "{{base_url}}"',
      'FAKE_API_KEY = "{{token}}"',
      '',
    ].join('\n'),
  );
  return path;
}

/** The proctor.toml of a home whose profile `byo` points at `server`, plus `profile` lines. */
export function fakeAgentToml(server: ProtocolServer, profile: string[]): string {
  return [
    // Any adapter: --agent runs the agent through the profile's provider.
    '[solvers.byo]',
    'adapter = "flat"',
    `base_url = "${server.baseUrl}"`,
    'model = "scripted"',
    'api_key_env = "PROCTOR_AGENT_KEY"',
    ...profile,
    '',
  ].join('\n');
}

/** A home with `toml` and the fake agent script beside it; its folder. */
export function fakeAgentHome(toml: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'proctor.toml'), toml);
  writeFileSync(join(dir, 'fake-agent'), AGENT);
  chmodSync(join(dir, 'fake-agent'), 0o755);
  return dir;
}

/** A home whose profile `byo` points at a scripted provider, with the fake agent beside it. */
export async function fakeAgentSetup(profile: string[], otherwise?: () => UpstreamStep) {
  const server = await startProtocolServer([], otherwise ? { otherwise } : {});
  const toml = fakeAgentToml(server, profile);
  return { dir: fakeAgentHome(toml), server, toml };
}

/** A suite of copies of the shell task, one per name, each description naming its mode. */
export function fakeAgentSuite(names: string[]): string {
  const dir = join(tempDir('proctor-suite-'), 'suite');
  for (const name of names) {
    const task = join(dir, name);
    mkdirSync(task, { recursive: true });
    cpSync(TASK, task, { recursive: true });
    const toml = join(task, 'task.toml');
    writeFileSync(
      toml,
      readFileSync(toml, 'utf8').replace('id = "shell-div-zero"', `id = "ends-${name}"`),
    );
    writeFileSync(join(task, 'description.md'), `Fix it. MODE-${name}\n`);
  }
  return dir;
}

export interface SolveRow {
  status: string;
  errorCode?: string | null;
  result: {
    task: { id: string };
    verdict: string;
    reason: string;
    detail: string;
    end: { reason: string };
    candidate: { files: number } | null;
    agent?: { outcome: string; exitCode: number | null };
    costUsd: number | null;
  } | null;
}

/** The batch's `count` solves (enqueued first: jobs 1 to count); `args` adds `--db URL`. */
export async function fakeAgentSolves(
  dir: string,
  count: number,
  args: string[] = [],
): Promise<SolveRow[]> {
  const ids = Array.from({ length: count }, (_, i) => String(i + 1));
  const status = await proctor(['--home', dir, ...args, 'status', ...ids, '--json']);
  expect(status.code).toBe(0);
  const { jobs } = JSON.parse(status.stdout) as { jobs: Array<SolveRow & { kind: string }> };
  return jobs.filter((j) => j.kind === 'solve');
}
