// The model proxy as tests use it on the host: a proxy on a socket in a temp folder, the real
// Node forwarder (the same source the sandbox runs) on a free loopback port in front of it,
// and the proxy's log lines and stops captured. Everything is closed after the test.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createLogger } from '../../src/logger.js';
import {
  FORWARDER_NODE_SOURCE,
  startModelProxy,
  type ModelProxy,
  type ModelProxyOptions,
  type ProxyStop,
} from '../../src/proxy/index.js';
import { createDeadline } from '../../src/solvers/deadline.js';
import { onCleanup, tempDir } from './temp.js';

export interface TestProxy {
  proxy: ModelProxy;
  /** `http://127.0.0.1:<forwarder port>/v1`. */
  baseUrl: string;
  stops: ProxyStop[];
  logs: string[];
}

/** Starts the Node forwarder on the host for `socketPath`; its base URL. */
export async function startHostForwarder(socketPath: string): Promise<string> {
  const child = spawn(process.execPath, ['-e', FORWARDER_NODE_SOURCE, '0', socketPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onCleanup(() => {
    child.kill('SIGKILL');
  });
  const lines = createInterface({ input: child.stdout });
  const port = await new Promise<number>((resolve, reject) => {
    lines.once('line', (line) => {
      const match = /^listening 127\.0\.0\.1:(\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
      else reject(new Error(`unexpected forwarder line ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`the forwarder exited ${String(code)}`)));
  });
  return `http://127.0.0.1:${port}/v1`;
}

export async function startTestProxy(
  options: Partial<ModelProxyOptions> & Pick<ModelProxyOptions, 'upstream'>,
): Promise<TestProxy> {
  const stops: ProxyStop[] = [];
  const logs: string[] = [];
  const deadline = options.deadline ?? createDeadline(120_000);
  const proxy = await startModelProxy({
    socketDir: tempDir('proctor-proxy-'),
    logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }),
    ...options,
    deadline,
    onStop: (stop) => {
      stops.push(stop);
      options.onStop?.(stop);
    },
  });
  onCleanup(async () => {
    await proxy.close();
    deadline.dispose();
  });
  const baseUrl = await startHostForwarder(proxy.socketPath);
  return { proxy, baseUrl, stops, logs };
}
