/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are parsed JSON, checked by the assertions themselves */
// Numbers in JSON bodies over real HTTP: every numeric field of every request body, found in
// the OpenAPI document (generated from the very schemas the routes validate with, so a new
// field is walked without this file changing), is refused with a 400 that names the field
// and its own bounds in the command line's words ("expected an integer from 1 to 20"), never
// zod's safe-integer limit, for too big, too small, fractions, exponents such as 1e308,
// negatives and strings; nothing is enqueued. Its bounds themselves are accepted.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { answers } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { httpCaller } from '../helpers/http.js';
import { ROOT } from '../helpers/processes.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

interface JsonSchema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** One numeric field of a request body, and a valid body with `leaf` put in its place. */
interface NumericField {
  route: string;
  key: string;
  schema: JsonSchema;
  body: (leaf: unknown) => unknown;
}

/** Strings that make a body valid here: a real bundle and solver profile of the test home. */
const STRINGS: Record<string, string> = {
  bundle: 'shell-task',
  path: 'shell-task',
  solver: 'mini',
};

/** The smallest valid value of `schema` (required keys only, a union's first variant). */
function minimal(schema: JsonSchema, name = ''): unknown {
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants?.[0]) return minimal(variants[0], name);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.[0] !== undefined) return schema.enum[0];
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [key, minimal(schema.properties?.[key] ?? {}, key)]),
      );
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () =>
        minimal(schema.items ?? {}, name),
      );
    case 'string':
      return STRINGS[name] ?? 'x';
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    default:
      throw new Error(`no minimal value for ${JSON.stringify(schema)}`);
  }
}

/** Every numeric field under `schema`, each with the valid body around it. */
function* numericFields(schema: JsonSchema, key = ''): Generator<Omit<NumericField, 'route'>> {
  if (schema.type === 'integer' || schema.type === 'number') {
    yield { key, schema, body: (leaf) => leaf };
    return;
  }
  for (const variant of schema.oneOf ?? schema.anyOf ?? []) yield* numericFields(variant, key);
  if (schema.type === 'array' && schema.items) {
    for (const field of numericFields(schema.items, `${key}[0]`)) {
      yield { ...field, body: (leaf) => [field.body(leaf)] };
    }
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    for (const field of numericFields(property, key === '' ? name : `${key}.${name}`)) {
      yield {
        ...field,
        body: (leaf) => ({ ...(minimal(schema) as object), [name]: field.body(leaf) }),
      };
    }
  }
}

/** Every numeric field of every JSON request body of the API. */
function allNumericFields(): NumericField[] {
  const fields: NumericField[] = [];
  for (const [path, item] of Object.entries(openApiDocument().paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = (operation as { requestBody?: { content: Record<string, { schema: unknown }> } })
        .requestBody?.content['application/json']?.schema;
      if (body === undefined) continue;
      for (const field of numericFields(body as JsonSchema)) {
        fields.push({ ...field, route: `${method.toUpperCase()} ${path}` });
      }
    }
  }
  return fields;
}

/** The body as JSON text with `raw` written literally in the field's place (`1e308` stays so). */
function bodyText(field: NumericField, raw: string): string {
  return JSON.stringify(field.body('@leaf@')).replace('"@leaf@"', raw);
}

async function api() {
  const home = tempDir();
  const tasks = join(home, 'tasks');
  mkdirSync(tasks);
  cpSync(join(ROOT, 'test/fixtures/bundles/shell-task'), join(tasks, 'shell-task'), {
    recursive: true,
  });
  writeFileSync(
    join(home, 'proctor.toml'),
    `tasks_root = ${JSON.stringify(tasks)}\n[solvers.mini]\nadapter = "flat"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "NOPE_KEY"\n`,
  );
  const config = loadConfig(home);
  const store = tempStore({ path: config.dbPath });
  const artifacts = createArtifactStore({
    root: join(home, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const server = await startServer({ port: 0, store, artifacts, config, secrets: [] });
  onCleanup(() => server.close());
  return { call: httpCaller(server.port), store };
}

/** Path templates with a job id in them name job 1, which these tests never make. */
const concrete = (route: string) => route.replace('{id}', '1').split(' ') as [string, string];

describe('numbers in API bodies', () => {
  const fields = allNumericFields();

  it('finds every numeric field, each with both bounds declared', () => {
    const found = fields.map((f) => `${f.route} ${f.key}`);
    // The walk itself must work: these are known; any new one is walked too.
    expect(found).toEqual(
      expect.arrayContaining([
        'POST /api/jobs repeat',
        'POST /api/jobs timeoutSeconds',
        'POST /api/batches jobs[0].repeat',
        'POST /api/batches jobs[0].timeoutSeconds',
      ]),
    );
    for (const field of fields) {
      const where = `${field.route} ${field.key}`;
      expect(field.schema.type, where).toBe('integer');
      expect(field.schema.minimum, where).toEqual(expect.any(Number));
      expect(field.schema.maximum, where).toEqual(expect.any(Number));
      expect(field.schema.exclusiveMinimum, where).toBeUndefined();
      expect(field.schema.exclusiveMaximum, where).toBeUndefined();
    }
  });

  it('refuses every bad value of every numeric field with 400 naming the field and its bounds, and enqueues nothing', async () => {
    const { call, store } = await api();
    for (const field of fields) {
      const { minimum: min = NaN, maximum: max = NaN } = field.schema;
      const bad = [
        '1e308',
        '-1e308',
        String(max + 1),
        String(min - 1),
        '-1',
        `${min}.5`,
        '9007199254740993',
        '1e400', // JSON.parse reads it as Infinity
        '"NaN"',
        '"Infinity"',
        `"${min}"`,
        '"1e3"',
        'null',
        'true',
        '[]',
        '{}',
      ];
      for (const raw of bad) {
        const [method, path] = concrete(field.route);
        const answer = await call(method, path, bodyText(field, raw));
        const what = `${field.route} ${field.key} = ${raw}`;
        expect(answer.status, `${what}: ${answer.text}`).toBe(400);
        answers.error.parse(answer.json());
        expect(answer.json().error.code, what).toBe('PAYLOAD_INVALID');
        const message = answer.json().error.message as string;
        expect(message, what).toMatch(
          new RegExp(
            `^body\\.${field.key.replace(/[.[\]]/g, '\\$&')}: expected an integer from ${min} to ${max}, got \`[^\n]+\`$`,
          ),
        );
        expect(message, what).not.toMatch(/9007199254740991|Too (big|small)|expected int\b/);
      }
    }
    expect((await store.listJobs()).items).toEqual([]);
    expect((await store.listBatches()).items).toEqual([]);
  });

  it('quotes the value as it was read: an exponent, a fraction, a string', async () => {
    const { call } = await api();
    const cases: Array<[string, string]> = [
      ['{"kind":"baseline","bundle":"shell-task","repeat":1e308}', '`1e+308`'],
      ['{"kind":"baseline","bundle":"shell-task","repeat":2.5}', '`2.5`'],
      ['{"kind":"baseline","bundle":"shell-task","repeat":"5"}', '`"5"`'],
      ['{"kind":"solve","bundle":"shell-task","solver":"mini","timeoutSeconds":-3}', '`-3`'],
    ];
    for (const [body, got] of cases) {
      const answer = await call('POST', '/api/jobs', body);
      expect(answer.status).toBe(400);
      expect(answer.json().error.message).toMatch(
        new RegExp(`: expected an integer from \\d+ to \\d+, got ${got.replace(/[.+]/g, '\\$&')}$`),
      );
    }
    expect((await call('POST', '/api/jobs', cases[0]?.[0])).json().error.message).toBe(
      'body.repeat: expected an integer from 1 to 20, got `1e+308`',
    );
  });

  it('accepts each field at its bounds', async () => {
    const { call, store } = await api();
    let made = 0;
    for (const field of fields) {
      const { minimum: min = NaN, maximum: max = NaN } = field.schema;
      for (const value of [min, max]) {
        const [method, path] = concrete(field.route);
        const answer = await call(method, path, bodyText(field, String(value)));
        expect(answer.status, `${field.route} ${field.key} = ${value}: ${answer.text}`).toBe(201);
        made += 1;
      }
    }
    expect((await store.listJobs({}, { limit: 200 })).items).toHaveLength(made);
  });
});
