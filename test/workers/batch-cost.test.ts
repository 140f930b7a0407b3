// The batch cost cap as model proxies draw on it: two proxies of one batch, each with its own
// store on one database (as two worker processes, or two hosts, have), against the scripted
// provider with prices, on both stores; and a spend that cannot be read or recorded stops the
// solve rather than waiving the cap.
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/queue/index.js';
import { batchCost } from '../../src/workers/batch-cost.js';
import { startTestProxy, type TestProxy } from '../helpers/model-proxy.js';
import { startProtocolServer } from '../helpers/protocol-server.js';
import { STORE_KINDS, sqliteKind } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sk-proj-BATCHCOSTKEY0123456789abcdefCOST';
/** 120 tokens an answer (the scripted default) at $1000 per million: $0.12. */
const PRICES = { input: 1000, cachedInput: 1000, output: 1000 };

async function batchOf(store: JobStore): Promise<string> {
  const { batch } = await store.enqueueBatch({
    jobs: [{ kind: 'solve', payload: { bundle: '/t', solver: 'm' } }],
  });
  return batch!.id;
}

const ask = (p: TestProxy) =>
  fetch(`${p.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.proxy.token}` },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));

describe.each(STORE_KINDS)('two proxies of one batch on $name', (kind) => {
  it('refuse the next request once together they reach the batch’s cap', async () => {
    const upstream = await startProtocolServer();
    const [a, b] = await kind.pair();
    const batchId = await batchOf(a);
    // Each alone would have had the whole $0.30 left at its start.
    const start = (store: JobStore) =>
      startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
        prices: PRICES,
        sharedCost: batchCost(store, batchId, 0.3),
      });
    const [one, two] = await Promise.all([start(a), start(b)]);

    expect((await ask(one)).status).toBe(200); // $0.12
    expect((await ask(two)).status).toBe(200); // $0.24
    expect((await ask(one)).status).toBe(200); // $0.36: over the cap; this answer still arrives
    const refused = await ask(two);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('the batch has spent $0.3600, reaching its cost cap of $0.3');
    expect((await ask(one)).status).toBe(429);
    expect(upstream.requests).toHaveLength(3);
    expect(await b.batchSpent(batchId)).toBeCloseTo(0.36, 10);
    for (const { stops } of [one, two]) {
      expect(stops).toEqual([
        {
          reason: 'BUDGET_EXCEEDED',
          limit: 'cost',
          detail: 'the batch has spent $0.3600, reaching its cost cap of $0.3',
        },
      ]);
    }
  });

  it('refuse at once a solve whose batch has already spent its cap elsewhere', async () => {
    const upstream = await startProtocolServer();
    const [a, b] = await kind.pair();
    const batchId = await batchOf(a);
    await a.drawCost(batchId, 0.3);
    const late = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      prices: PRICES,
      sharedCost: batchCost(b, batchId, 0.3),
    });
    const refused = await ask(late);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('the batch has spent $0.3000, reaching its cost cap of $0.3');
    expect(upstream.requests).toHaveLength(0);
  });

  it('stop a solve whose batch spend cannot be read, forwarding nothing', async () => {
    const upstream = await startProtocolServer();
    const store = await kind.open();
    const proxy = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      prices: PRICES,
      sharedCost: batchCost(store, 'no-such-batch', 1),
    });
    const refused = await ask(proxy);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain(
      "the batch's spend could not be read, so its cost cap cannot be held: no batch no-such-batch",
    );
    expect(proxy.stops).toMatchObject([{ reason: 'BUDGET_EXCEEDED', limit: 'cost' }]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('stop a solve whose answer’s cost cannot be recorded, after that answer', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const upstream = await startProtocolServer([{ until: held, then: { text: 'ok' } }]);
    const store = await kind.open();
    const batchId = await batchOf(store);
    const proxy = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      prices: PRICES,
      sharedCost: batchCost(store, batchId, 1),
    });
    const answer = ask(proxy);
    // The store goes away while the answer is on its way: its draw fails.
    await waitFor(() => upstream.requests.length === 1, { what: 'the request upstream' });
    await store.close();
    release();
    expect((await answer).status).toBe(200);
    const refused = await ask(proxy);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain(
      "the batch's spend could not be recorded, so its cost cap cannot be held",
    );
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('a proxy with a shared cap', () => {
  it('draws an answer’s cost before the answer ends, however slow the store: the next turn on another proxy sees it', async () => {
    const upstream = await startProtocolServer();
    const [a, b] = await sqliteKind.pair();
    const batchId = await batchOf(a);
    const slowly = (store: JobStore) => {
      const shared = batchCost(store, batchId, 0.2);
      return {
        capUsd: shared.capUsd,
        spentUsd: () => shared.spentUsd(),
        draw: async (usd: number) => {
          await new Promise((resolve) => setTimeout(resolve, 400));
          return shared.draw(usd);
        },
      };
    };
    const start = (store: JobStore) =>
      startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
        prices: PRICES,
        sharedCost: slowly(store),
      });
    const [one, two] = await Promise.all([start(a), start(b)]);
    expect((await ask(one)).status).toBe(200); // $0.12
    expect((await ask(one)).status).toBe(200); // $0.24: over the cap, drawn by the answer's end
    const refused = await ask(two);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('the batch has spent $0.2400, reaching its cost cap of $0.2');
    expect(upstream.requests).toHaveLength(2);
  });

  it('is refused without prices', async () => {
    const upstream = await startProtocolServer();
    const store = await sqliteKind.open();
    await expect(
      startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
        sharedCost: batchCost(store, 'b', 1),
      }),
    ).rejects.toThrow('model proxy: a cost limit needs prices (the profile sets none)');
  });
});
