// The fail-closed audit of `codex exec --json` output, fed real Codex 0.171.0 transcripts
// (recorded with test/helpers/responses-server.ts as the provider and a stdio MCP server named
// `proctor`, and quoted from shared/research/codex-offline.md) and hand-made adversarial lines.
import { describe, expect, it } from 'vitest';
import {
  ALLOWED_TOOLS,
  createAudit,
  MCP_SERVER_NAME,
  type AuditFinding,
  type AuditOptions,
} from '../../src/solvers/codex/audit.js';

const THREAD = '{"type":"thread.started","thread_id":"01a228aa-43a1-7283-8be8-7adccfc0e3f9"}';
const METADATA =
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}';
const TURN = '{"type":"turn.started"}';
const COMPLETED =
  '{"type":"turn.completed","usage":{"input_tokens":40,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}';
const HEAD = [THREAD, METADATA, TURN];

/** A real run: reasoning, one read_file call through the MCP server, an answer. */
const SUCCESS = [
  ...HEAD,
  '{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"plan it"}}',
  '{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"proctor","tool":"read_file","arguments":{"path":"README.md"},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"proctor","tool":"read_file","arguments":{"path":"README.md"},"result":{"content":[{"type":"text","text":"contents of README.md"}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done."}}',
  COMPLETED,
];

/** A real run whose tool answered isError: Codex reports status failed, the turn completes. */
const FAILED_TOOL = [
  ...HEAD,
  '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"proctor","tool":"run_command","arguments":{"command":"ls"},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"proctor","tool":"run_command","arguments":{"command":"ls"},"result":{"content":[{"type":"text","text":"ran ls"}],"structured_content":null},"error":null,"status":"failed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}',
  COMPLETED,
];

/** A real run in which the model called Codex's built-in resource tool; the turn "succeeded". */
const BUILTIN_RESOURCE_TOOL = [
  ...HEAD,
  '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"codex","tool":"list_mcp_resources","arguments":{},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"codex","tool":"list_mcp_resources","arguments":{},"result":{"content":[{"type":"text","text":"{\\"resources\\":[]}"}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}',
  COMPLETED,
];

/** The research's working run, whose MCP server was named `harness`. */
const RESEARCH_RUN = [
  '{"type":"thread.started","thread_id":"01a2279c-2331-7ac0-ba3b-dce9ec246d3b"}',
  '{"type":"turn.started"}',
  '{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"harness","tool":"read_file","arguments":{"path":"README.md"},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"harness","tool":"read_file","arguments":{"path":"README.md"},"result":{"content":[{"type":"text","text":"contents of README.md: hello from MCP"}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done: I read the file via MCP."}}',
  '{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}',
];

const HIGH_DEMAND = 'We’re currently experiencing high demand, which may cause temporary errors.';

/** A top-level error then turn.failed with the same message: how every provider failure ends. */
function failure(message: string): string[] {
  return [
    ...HEAD,
    JSON.stringify({ type: 'error', message }),
    JSON.stringify({ type: 'turn.failed', error: { message } }),
  ];
}

function item(fields: Record<string, unknown>, event = 'item.completed'): string {
  return JSON.stringify({ type: event, item: { id: 'item_9', ...fields } });
}

function toolCall(server: unknown, tool: unknown, event = 'item.completed'): string {
  return item({ type: 'mcp_tool_call', server, tool, arguments: {}, status: 'completed' }, event);
}

function errorItem(message: string): string {
  return item({ type: 'error', message });
}

/** Feeds every line; returns the audit and each non-null finding with its line's index. */
function audit(lines: string[], options?: AuditOptions) {
  const a = createAudit(options);
  const findings: Array<{ index: number; finding: AuditFinding }> = [];
  lines.forEach((text, index) => {
    const finding = a.line(text);
    if (finding) findings.push({ index, finding });
  });
  return { audit: a, findings };
}

/** The run's only finding, which must be fatal, on line `index`, and be what end() reports. */
function expectFatal(lines: string[], category: string, index = lines.length - 1) {
  const { audit: a, findings } = audit(lines);
  expect(findings).toHaveLength(1);
  expect(findings[0]).toMatchObject({ index, finding: { fatal: true, category } });
  expect(a.end()).toBe(findings[0]?.finding);
  return findings[0]!.finding;
}

describe('createAudit', () => {
  it('configures one server, proctor, with the three solver tools', () => {
    expect(MCP_SERVER_NAME).toBe('proctor');
    expect([...ALLOWED_TOOLS]).toEqual(['run_command', 'read_file', 'apply_patch']);
  });

  it('passes a real successful run and summarises its tool calls, usage and answer', () => {
    const { audit: a, findings } = audit(SUCCESS);
    expect(findings).toEqual([]);
    expect(a.end()).toBeNull();
    expect(a.summary()).toEqual({
      toolCalls: [{ tool: 'read_file', status: 'completed' }],
      usage: {
        input_tokens: 40,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: 20,
        reasoning_output_tokens: 0,
      },
      messages: ['Done.'],
      completed: true,
    });
  });

  it('records the metadata notice as a warning that keeps only the model slug', () => {
    const { audit: a } = audit(SUCCESS);
    expect(a.warnings()).toEqual([
      { fatal: false, category: 'model_metadata', detail: 'model fake-model' },
    ]);
  });

  it('passes a run without the metadata notice with no warnings', () => {
    const { audit: a, findings } = audit(SUCCESS.filter((line) => line !== METADATA));
    expect(findings).toEqual([]);
    expect(a.end()).toBeNull();
    expect(a.warnings()).toEqual([]);
  });

  it('passes a run whose tool call failed, recording the failed status', () => {
    const { audit: a, findings } = audit(FAILED_TOOL);
    expect(findings).toEqual([]);
    expect(a.end()).toBeNull();
    expect(a.summary().toolCalls).toEqual([{ tool: 'run_command', status: 'failed' }]);
  });

  it('rejects a call to the built-in resource tools, which Codex reports as server codex', () => {
    const finding = expectFatal(BUILTIN_RESOURCE_TOOL, 'foreign_tool', 3);
    expect(finding.detail).toContain('`codex`');
    expect(finding.detail).toContain('`list_mcp_resources`');
  });

  it.each(['list_mcp_resource_templates', 'read_mcp_resource'])(
    'rejects the built-in %s on server codex',
    (tool) => {
      expectFatal([...HEAD, toolCall('codex', tool, 'item.started')], 'foreign_tool');
    },
  );

  it('rejects the research run, whose tools were served by a server named harness', () => {
    const finding = expectFatal(RESEARCH_RUN, 'foreign_tool', 2);
    expect(finding.detail).toContain('`harness`');
  });

  it('rejects a tool on the proctor server that is not one of the three', () => {
    const finding = expectFatal([...HEAD, toolCall('proctor', 'secret_tool')], 'foreign_tool');
    expect(finding.detail).toBe('tool call to server `proctor`, tool `secret_tool`');
  });

  it('rejects tool calls with a missing or non-string server or tool', () => {
    expectFatal([...HEAD, toolCall(undefined, 'read_file')], 'foreign_tool');
    expectFatal([...HEAD, toolCall('proctor', undefined)], 'foreign_tool');
    expectFatal([...HEAD, toolCall('proctor', ['read_file'])], 'foreign_tool');
    expectFatal([...HEAD, toolCall('PROCTOR', 'read_file')], 'foreign_tool');
  });

  it('rejects a foreign tool even in an item.updated', () => {
    expectFatal([...HEAD, toolCall('other', 'read_file', 'item.updated')], 'foreign_tool');
  });

  it.each([
    ['HTTP 500', HIGH_DEMAND, 'provider_error'],
    ['a refused connection', 'Connection failed: error sending request', 'provider_error'],
    ['a missing key', 'Missing environment variable: `FAKE_KEY`.', 'provider_error'],
    ['response.failed', 'stream disconnected before completion: scripted failure', 'stream_error'],
    [
      'a cut stream',
      'stream disconnected before completion: stream closed before response.completed',
      'stream_error',
    ],
    [
      'a cut stream (as this fake cuts it)',
      'stream disconnected before completion: Transport error: network error: error decoding response body',
      'stream_error',
    ],
    [
      'an idle stream',
      'stream disconnected before completion: idle timeout waiting for SSE',
      'stream_error',
    ],
  ])('fails a run ended by %s at its top-level error, quoting it', (_, message, category) => {
    const lines = failure(message);
    const finding = expectFatal(lines, category, lines.length - 2);
    expect(finding.detail).toBe(message);
  });

  it('fails on a top-level retry notice even though the turn might have recovered', () => {
    const notice = JSON.stringify({
      type: 'error',
      message: 'Reconnecting... waiting for network',
    });
    expectFatal([...HEAD, notice, ...SUCCESS.slice(3)], 'provider_error', 3);
  });

  it('fails on turn.failed, quoting its error message', () => {
    const lines = [...HEAD, JSON.stringify({ type: 'turn.failed', error: { message: 'boom' } })];
    expect(expectFatal(lines, 'turn_failed').detail).toBe('boom');
    const bare = [...HEAD, '{"type":"turn.failed"}'];
    expect(expectFatal(bare, 'turn_failed').detail).toBe('turn failed without a message');
  });

  it('fails a run that hung after turn.started (no terminal event) at end()', () => {
    const { audit: a, findings } = audit(HEAD);
    expect(findings).toEqual([]);
    expect(a.end()).toEqual({
      fatal: true,
      category: 'incomplete',
      detail: 'the stream ended without turn.completed',
    });
    expect(a.summary().completed).toBe(false);
    expect(a.summary().usage).toBeNull();
  });

  it('fails an empty stdout (a required MCP server that did not start) at end()', () => {
    expect(createAudit().end()).toMatchObject({ fatal: true, category: 'incomplete' });
  });

  it('fails an interrupted turn, whose tool calls went through but which never completed', () => {
    const { audit: a, findings } = audit(SUCCESS.slice(0, -1));
    expect(findings).toEqual([]);
    expect(a.end()).toMatchObject({ category: 'incomplete' });
  });

  it.each([
    '{"type":"item.plan.delta","item_id":"item_1","delta":"step"}',
    '{"type":"request_user_input","questions":[]}',
    '{"type":"turn.interrupted"}',
    '{"type":"thread.ended"}',
    '{"type":"response.unknown_future_event"}',
    '{"type":""}',
  ])('fails on the event %s, which it does not allow', (line) => {
    expectFatal([...HEAD, line], 'unknown_event');
  });

  it.each([
    { type: 'command_execution', command: 'ls', aggregated_output: '', status: 'completed' },
    { type: 'file_change', changes: [{ path: 'a', kind: 'add' }], status: 'completed' },
    { type: 'web_search', query: 'q' },
    { type: 'todo_list', items: [{ text: 't', completed: false }] },
    { type: 'plan', text: 'p' },
    { type: 'collab_tool_call', tool: 'spawn_agent' },
  ])('fails on a $type item, which Proctor switches off', (fields) => {
    const finding = expectFatal([...HEAD, item(fields)], 'forbidden_item');
    expect(finding.detail).toBe(`item.completed \`${fields.type}\``);
  });

  it.each(['image_generation', 'dynamic_tool_call', 'MCP_TOOL_CALL', ''])(
    'fails on the unknown item type "%s"',
    (type) => {
      expectFatal([...HEAD, item({ type })], 'unknown_item');
    },
  );

  it('fails on the stream-lag notice, since with --ephemeral dropped items are lost', () => {
    const lag = errorItem('in-process app-server event stream lagged; dropped 12 events');
    const finding = expectFatal([...HEAD, lag], 'stream_lag');
    expect(finding.detail).toBe('in-process app-server event stream lagged; dropped 12 events');
  });

  it.each([
    'model rerouted: fake-model -> gpt-5',
    'MCP tool call requires approval, but approval policy is never',
    'Under-development features enabled: x',
  ])('fails on the item-level error "%s"', (message) => {
    expect(expectFatal([...HEAD, errorItem(message)], 'item_error').detail).toBe(message);
  });

  it('fails on an error item without a message', () => {
    expectFatal([...HEAD, item({ type: 'error' })], 'item_error');
    expectFatal([...HEAD, item({ type: 'error', message: { text: 'x' } })], 'item_error');
  });

  describe('the metadata notice', () => {
    const exact = (slug: string) =>
      `Model metadata for \`${slug}\` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.`;

    it('is tolerated in its exact shape, for any slug when no model is set', () => {
      for (const slug of ['fake-model', 'gpt-5.5', 'org/model:latest']) {
        const { audit: a, findings } = audit([THREAD, errorItem(exact(slug)), ...SUCCESS.slice(2)]);
        expect(findings).toEqual([]);
        expect(a.end()).toBeNull();
        expect(a.warnings()).toEqual([
          { fatal: false, category: 'model_metadata', detail: `model ${slug}` },
        ]);
      }
    });

    it('is tolerated only for the selected model when one is given', () => {
      const ok = audit([THREAD, errorItem(exact('fake-model'))], { model: 'fake-model' });
      expect(ok.findings).toEqual([]);
      const other = audit([THREAD, errorItem(exact('gpt-5.5'))], { model: 'fake-model' });
      expect(other.findings).toMatchObject([{ finding: { category: 'item_error' } }]);
    });

    it.each([
      ['a trailing space', `${exact('fake-model')} `],
      ['a trailing newline', `${exact('fake-model')}\n`],
      ['a prefix', `warning: ${exact('fake-model')}`],
      ['no backticks', exact('fake-model').replace(/`/g, '')],
      ['an empty slug', exact('')],
      ['a backtick in the slug', exact('a`b')],
      ['a newline in the slug', exact('a\nb')],
      ['a slug over 200 characters', exact('m'.repeat(201))],
      ['other wording', exact('fake-model').replace('fallback', 'default')],
      ['a lower-case start', exact('fake-model').replace('Model', 'model')],
    ])('is rejected with %s', (_, message) => {
      expectFatal([THREAD, errorItem(message)], 'item_error');
    });

    it('is rejected as a top-level error', () => {
      const line = JSON.stringify({ type: 'error', message: exact('fake-model') });
      expectFatal([THREAD, line], 'provider_error');
    });
  });

  it.each([
    ['an empty line', ''],
    ['a blank line', '   '],
    ['text', 'Reading additional input from stdin...'],
    ['truncated JSON', '{"type":"turn.started"'],
    ['an array', '[{"type":"turn.started"}]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"turn.started"'],
    ['an object without type', '{"thread_id":"x"}'],
    ['a non-string type', '{"type":1}'],
    ['a null type', '{"type":null}'],
    ['two events on one line', `${TURN}${TURN}`],
  ])('fails on a malformed line: %s', (_, line) => {
    expectFatal([THREAD, line], 'malformed');
  });

  it.each([
    ['no item', '{"type":"item.completed"}'],
    ['an array item', '{"type":"item.completed","item":[]}'],
    ['an item without type', '{"type":"item.completed","item":{"id":"item_1","text":"x"}}'],
    ['an item without id', '{"type":"item.completed","item":{"type":"agent_message","text":"x"}}'],
    ['a numeric id', '{"type":"item.started","item":{"id":1,"type":"agent_message"}}'],
  ])('fails on an item event with %s', (_, line) => {
    expectFatal([...HEAD, line], 'malformed');
  });

  it('fails on a line longer than the limit, counting UTF-8 bytes', () => {
    const message = (text: string) => item({ type: 'agent_message', text });
    const limit = message('').length + 30;
    const fits = message('x'.repeat(30));
    expect(audit([THREAD, TURN, fits], { maxLineBytes: limit }).findings).toEqual([]);
    const multibyte = message('€'.repeat(11)); // 11 characters, 33 bytes
    expect(multibyte.length).toBeLessThanOrEqual(limit);
    expect(audit([THREAD, TURN, multibyte]).findings).toEqual([]); // the default limit is 1 MiB
    const { findings } = audit([THREAD, TURN, multibyte], { maxLineBytes: limit });
    expect(findings).toMatchObject([{ index: 2, finding: { category: 'oversized' } }]);
  });

  it('fails on a line over 1 MiB by default', () => {
    const big = item({ type: 'agent_message', text: 'x'.repeat(1024 * 1024) });
    const finding = expectFatal([...HEAD, big], 'oversized');
    expect(finding.detail).toBe(`a line of ${big.length} bytes`);
  });

  it.each([
    ['a second turn.completed', COMPLETED],
    ['an agent message', item({ type: 'agent_message', text: 'late' })],
    ['a new turn', TURN],
    ['an empty line', ''],
    ['the metadata notice', METADATA],
  ])('fails on %s after turn.completed', (_, line) => {
    const finding = expectFatal([...SUCCESS, line], 'after_completion');
    expect(finding.detail).toBe('output after turn.completed');
  });

  it('fails on a second turn.started', () => {
    expectFatal([...HEAD, TURN], 'sequence');
  });

  it('fails when thread.started is not the first event, or comes twice', () => {
    expectFatal([TURN], 'sequence', 0);
    expectFatal([METADATA], 'sequence', 0);
    expectFatal([THREAD, THREAD], 'sequence');
  });

  it('fails on work outside the turn', () => {
    expectFatal([THREAD, item({ type: 'agent_message', text: 'x' })], 'sequence');
    expectFatal([THREAD, toolCall('proctor', 'read_file', 'item.started')], 'sequence');
    expectFatal([THREAD, COMPLETED], 'sequence');
  });

  it('fails at end() when a tool call was started and never completed', () => {
    const { audit: a, findings } = audit([...SUCCESS.slice(0, 5), ...SUCCESS.slice(6)]);
    expect(findings).toEqual([]);
    expect(a.end()).toEqual({
      fatal: true,
      category: 'unfinished_item',
      detail: '`item_2` started and never completed',
    });
  });

  it('fails when an item is started or completed twice', () => {
    expectFatal([...SUCCESS.slice(0, 5), SUCCESS[4]!], 'sequence');
    expectFatal([...SUCCESS.slice(0, 6), SUCCESS[5]!], 'sequence');
  });

  it('tolerates unknown extra fields on known events and items', () => {
    const lines = SUCCESS.map((line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      const item = event.item as Record<string, unknown> | undefined;
      const extra = { future: { nested: [1, 'two'] } };
      return JSON.stringify({
        ...event,
        ...extra,
        ...(item ? { item: { ...item, ...extra } } : {}),
      });
    });
    const { audit: a, findings } = audit(lines);
    expect(findings).toEqual([]);
    expect(a.end()).toBeNull();
    expect(a.summary().toolCalls).toEqual([{ tool: 'read_file', status: 'completed' }]);
  });

  it('keeps only the numeric usage counts, and reports none when usage is missing', () => {
    const usage = { input_tokens: 5, new_count: 7, label: 'x', nested: { a: 1 }, none: null };
    const withUsage = audit([...HEAD, JSON.stringify({ type: 'turn.completed', usage })]);
    expect(withUsage.audit.summary().usage).toEqual({ input_tokens: 5, new_count: 7 });
    const without = audit([...HEAD, '{"type":"turn.completed"}']);
    expect(without.audit.end()).toBeNull();
    expect(without.audit.summary()).toMatchObject({ usage: null, completed: true });
  });

  it('reports the first fatal finding once, ignores later lines, and end() repeats it', () => {
    const lines = [...HEAD, toolCall('codex', 'list_mcp_resources'), '', '{"type":"error"}'];
    const { audit: a, findings } = audit([...lines, ...SUCCESS.slice(3)]);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.finding.category).toBe('foreign_tool');
    expect(a.end()).toBe(findings[0]?.finding);
    expect(a.end()).toBe(findings[0]?.finding);
    expect(a.summary().completed).toBe(false);
  });

  it('keeps details to one bounded line', () => {
    const long = `first line\nsecond ${'x'.repeat(10_000)}`;
    const finding = expectFatal(
      [...HEAD, JSON.stringify({ type: 'error', message: long })],
      'provider_error',
    );
    expect(finding.detail.length).toBeLessThanOrEqual(300);
    expect(finding.detail).not.toMatch(/[\n\r]/);
    expect(finding.detail.startsWith('first line second')).toBe(true);
    const name = expectFatal(
      [...HEAD, toolCall('s'.repeat(5000), 't'.repeat(5000))],
      'foreign_tool',
    );
    expect(name.detail.length).toBeLessThanOrEqual(300);
  });

  it('does not quote the content of a malformed line', () => {
    const finding = expectFatal([THREAD, 'Authorization: Bearer sk-secret'], 'malformed');
    expect(finding.detail).not.toContain('sk-secret');
  });

  it('keeps the latest agent messages, each clipped', () => {
    const messages = Array.from({ length: 25 }, (_, i) =>
      item({ id: `m${i}`, type: 'agent_message', text: i === 24 ? 'y'.repeat(10_000) : `m${i}` }),
    );
    const { audit: a } = audit([...HEAD, ...messages, COMPLETED]);
    const kept = a.summary().messages;
    expect(kept).toHaveLength(20);
    expect(kept[0]).toBe('m5');
    expect(kept[19]!.length).toBeLessThanOrEqual(4_000);
  });

  it('hands out copies, so a caller cannot change what it recorded', () => {
    const { audit: a } = audit(SUCCESS);
    const summary = a.summary();
    summary.toolCalls.push({ tool: 'x', status: 'y' });
    summary.messages.length = 0;
    summary.usage!.input_tokens = 0;
    a.warnings().pop();
    expect(a.summary().toolCalls).toHaveLength(1);
    expect(a.summary().messages).toEqual(['Done.']);
    expect(a.summary().usage?.input_tokens).toBe(40);
    expect(a.warnings()).toHaveLength(1);
  });
});
