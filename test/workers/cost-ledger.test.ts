// The batch cost cap shared by concurrent solves in one process: the ledger's arithmetic, and
// two model proxies of one batch drawing on it against the scripted provider with prices.
import { describe, expect, it } from 'vitest';
import { createCostLedgers } from '../../src/workers/cost-ledger.js';
import { startTestProxy } from '../helpers/model-proxy.js';
import { startProtocolServer } from '../helpers/protocol-server.js';

const KEY = 'sk-proj-LEDGERKEY0123456789abcdefLEDGER';
/** 120 tokens an answer (the scripted default) at $1000 per million: $0.12. */
const PRICES = { input: 1000, cachedInput: 1000, output: 1000 };

describe('the batch cost ledger', () => {
  it('counts what every share of a batch spends, from what the store had spent', () => {
    const ledgers = createCostLedgers();
    const a = ledgers.open('b1', 1, 0.25);
    const b = ledgers.open('b1', 1, 0.25);
    const other = ledgers.open('b2', 1, 0);
    a.add(0.1);
    b.add(0.2);
    expect(a.spentUsd()).toBeCloseTo(0.55, 10);
    expect(b.spentUsd()).toBeCloseTo(0.55, 10);
    expect(other.spentUsd()).toBe(0);
  });

  it('still counts a finished solve whose result the store does not hold yet', () => {
    const ledgers = createCostLedgers();
    const a = ledgers.open('b', 1, 0);
    a.add(0.3);
    a.close();
    // The next solve starts before a's result is stored: the store still says 0.
    const b = ledgers.open('b', 1, 0);
    expect(b.spentUsd()).toBeCloseTo(0.3, 10);
  });

  it('takes in what other processes’ finished solves spent, with its own running ones', () => {
    const ledgers = createCostLedgers();
    const a = ledgers.open('b', 1, 0);
    a.add(0.1);
    // Another process finished a solve of $0.4 meanwhile; the store says so at b's start.
    const b = ledgers.open('b', 1, 0.4);
    expect(b.spentUsd()).toBeCloseTo(0.5, 10);
    b.add(0.05);
    expect(a.spentUsd()).toBeCloseTo(0.55, 10);
  });
});

describe('two proxies of one batch', () => {
  it('refuse the next request once together they reach the batch’s cap', async () => {
    const upstream = await startProtocolServer();
    const ledgers = createCostLedgers();
    // Each alone would have had the whole $0.30 left at its start.
    const start = () =>
      startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
        prices: PRICES,
        sharedCost: ledgers.open('batch', 0.3, 0),
      });
    const [one, two] = await Promise.all([start(), start()]);
    const ask = (p: typeof one) =>
      fetch(`${p.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${p.proxy.token}` },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      }).then(async (res) => ({ status: res.status, text: await res.text() }));

    expect((await ask(one)).status).toBe(200); // $0.12
    expect((await ask(two)).status).toBe(200); // $0.24
    expect((await ask(one)).status).toBe(200); // $0.36: over the cap; this answer still arrives
    const refused = await ask(two);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('the batch has spent $0.3600, reaching its cost cap of $0.3');
    expect((await ask(one)).status).toBe(429);
    expect(upstream.requests).toHaveLength(3);
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

  it('are refused a shared cap without prices', async () => {
    const upstream = await startProtocolServer();
    await expect(
      startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
        sharedCost: createCostLedgers().open('batch', 1, 0),
      }),
    ).rejects.toThrow('model proxy: a cost limit needs prices (the profile sets none)');
  });
});
