// The status page in a real headless Chromium, served by the real API (createApp, with its
// guards and CSP) on 127.0.0.1: serving, opening the page with every console error, page
// error, CSP violation and failed request collected, and waiting for a text.
import { accessSync, constants, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { serve } from '@hono/node-server';
import { chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { CONTENT_SECURITY_POLICY } from '../../src/api/guards.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { SqliteJobStore } from '../../src/queue/index.js';
import type { ArtifactStore } from '../../src/store/index.js';
import { onCleanup, tempDir } from './temp.js';
import { waitFor } from './wait.js';

/**
 * Chromium, as .ci/test-tools finds (and installs) it: `chromium` on PATH (Debian's package
 * puts it in /usr/bin); undefined when there is none.
 */
export function findChromium(path = process.env['PATH'] ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'chromium');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Serves the real API on 127.0.0.1 and records, on their way in, the POSTs the page sends and
 * the offsets of the log slices it asks for.
 */
export async function listen(deps: {
  store: SqliteJobStore;
  artifacts: ArtifactStore;
  clock: Clock;
  posts?: Array<{ path: string; contentType: string | undefined; body: string }>;
  logOffsets?: number[];
  /** Default: a fresh home's configuration. */
  home?: string;
  /** Lowers the API's bound on the jobs of one report. */
  maxReportJobs?: number;
}): Promise<string> {
  let port = 0;
  const app = createApp({
    store: deps.store,
    artifacts: deps.artifacts,
    clock: deps.clock,
    config: loadConfig(deps.home ?? tempDir()),
    secrets: [],
    port: () => port,
    ...(deps.maxReportJobs === undefined ? {} : { maxReportJobs: deps.maxReportJobs }),
  });
  const watch = async (request: Request, env: unknown) => {
    const url = new URL(request.url);
    if (request.method === 'POST') {
      deps.posts?.push({
        path: url.pathname,
        contentType: request.headers.get('content-type') ?? undefined,
        body: await request.clone().text(),
      });
    }
    if (/^\/api\/jobs\/\d+\/log$/.test(url.pathname)) {
      deps.logOffsets?.push(Number(url.searchParams.get('offset') ?? 0));
    }
    return app.fetch(request, env);
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: watch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  );
  port = (server.address() as AddressInfo).port;
  return `http://127.0.0.1:${port}/`;
}

/** A headless Chromium page at `url`; `problems` collects console errors, page errors,
 * CSP violations and failed requests. */
export async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const executablePath = findChromium();
  if (executablePath === undefined) {
    throw new Error(
      'the page tests need chromium on PATH; .ci/test-tools (run by the global setup of `npm test`) installs it',
    );
  }
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  onCleanup(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`console ${message.type()}: ${message.text()} at ${message.location().url}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  // Runs outside the page's CSP (injected by the browser, not the document).
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
  });
  const response = await page.goto(url);
  expect(response?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  return { page, problems };
}

export async function waitForText(
  locator: ReturnType<Page['locator']>,
  expected: string,
): Promise<void> {
  await waitFor(async () => (await locator.textContent()) === expected, {
    timeoutMs: 8_000,
    what: `text ${JSON.stringify(expected)}`,
  });
}
