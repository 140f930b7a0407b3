// The model proxy seen from inside a real sandbox: a container made by the isolation profile
// (network none, read-only root, no capabilities, non-root), with the proxy's socket folder
// bind-mounted read-only, the forwarder started as its command and an agent-like client as the
// forwarder's child. The client reports what it got back; nothing in it may hold the key.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hardenedContainerOptions } from '../../src/sandbox/profile.js';
import { forwarderArgv, type ForwarderRuntime } from '../../src/proxy/index.js';
import { dockerScope, fixtureImage, testDocker } from '../helpers/docker.js';
import { startTestProxy } from '../helpers/model-proxy.js';
import { startProtocolServer } from '../helpers/protocol-server.js';
import { onCleanup } from '../helpers/temp.js';

const KEY = 'sk-ant-REALKEY-9f8e7d6c5b4a3210-REALKEY';
const docker = testDocker();
const scope = dockerScope(docker, 'proxy-sandbox');
const MOUNT = '/run/proctor';
const PORT = 8787;

// Node 18 in the runners image: fetch, net and fs only.
const CLIENT = String.raw`
const net = require('net');
const fs = require('fs');
const [base, token, hostPort] = process.argv.slice(1);
const json = { 'content-type': 'application/json' };
const bearer = { ...json, authorization: 'Bearer ' + token };
const ask = async (path, headers, body) => {
  const r = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, headers: [...r.headers].map((h) => h.join(': ')), body: await r.text() };
};
const reach = (host, port) => new Promise((resolve) => {
  const socket = net.connect({ host, port: Number(port) });
  const done = (what) => { socket.destroy(); resolve(what); };
  socket.setTimeout(2000, () => done('timeout'));
  socket.on('connect', () => done('connected'));
  socket.on('error', (e) => done(e.code || e.message));
});
(async () => {
  const out = {};
  out.plain = await ask('/chat/completions', bearer, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  out.stream = await ask('/messages', { ...json, 'x-api-key': token }, { model: 'm', max_tokens: 9, stream: true, messages: [] });
  out.echo = await ask('/chat/completions', bearer, { model: 'm', messages: [] });
  out.wrong = await ask('/chat/completions', { ...json, authorization: 'Bearer not-the-token' }, { model: 'm', messages: [] });
  out.reach = {};
  for (const [host, port] of [['127.0.0.1', hostPort], ['172.17.0.1', hostPort], ['1.1.1.1', '443'], ['10.0.0.1', '80']]) {
    out.reach[host + ':' + port] = await reach(host, port);
  }
  out.procs = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map((p) => {
    const read = (f) => { try { return fs.readFileSync('/proc/' + p + '/' + f, 'latin1'); } catch (e) { return ''; } };
    return read('environ') + '\n' + read('cmdline');
  });
  out.mount = fs.statSync('${MOUNT}/model.sock').isSocket();
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e.stack)); process.exit(3); });
`;

interface ClientReport {
  plain: { status: number; headers: string[]; body: string };
  stream: { status: number; headers: string[]; body: string };
  echo: { status: number; headers: string[]; body: string };
  wrong: { status: number; headers: string[]; body: string };
  reach: Record<string, string>;
  procs: string[];
  mount: boolean;
}

/** Runs `cmd` in a hardened container with `socketDir` mounted read-only at MOUNT. */
async function runInSandbox(socketDir: string, cmd: string[]) {
  const image = await fixtureImage('runners');
  const options = hardenedContainerOptions({
    owner: scope.owner(),
    role: 'solver',
    image,
    cmd,
    uid: 1000,
    gid: 1000,
    workdir: '/tmp',
  });
  // The one host path an agent's sandbox needs: the proxy's socket folder, read-only.
  options.HostConfig!.Mounts = [
    ...(options.HostConfig!.Mounts ?? []),
    { Type: 'bind', Source: socketDir, Target: MOUNT, ReadOnly: true },
  ];
  const container = await docker.createContainer(options);
  onCleanup(() => container.remove({ force: true }));
  const stream = await container.attach({ stream: true, stdout: true, stderr: true });
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  stderr.on('data', (c: Buffer) => errors.push(c));
  docker.modem.demuxStream(stream, stdout, stderr);
  await container.start();
  const { StatusCode } = (await container.wait()) as { StatusCode: number };
  const inspect = await container.inspect();
  return {
    code: StatusCode,
    stdout: Buffer.concat(chunks).toString('utf8'),
    stderr: Buffer.concat(errors).toString('utf8'),
    config: JSON.stringify(inspect.Config) + JSON.stringify(inspect.HostConfig),
  };
}

describe('the model proxy from inside a sandbox', () => {
  it.each<ForwarderRuntime>(['node', 'python'])(
    'serves the agent through the %s forwarder, and the key, the provider and every other address stay out of reach',
    async (runtime) => {
      const upstream = await startProtocolServer([
        { text: 'hello from the model' },
        { text: 'streamed', chunks: 3 },
        { echoKey: true },
      ]);
      const { proxy } = await startTestProxy({
        upstream: { baseUrl: upstream.baseUrl, apiKey: KEY, model: 'real-model' },
      });
      const socketDir = proxy.socketPath.replace(/\/model\.sock$/, '');
      const hostPort = new URL(upstream.baseUrl).port;
      const cmd = forwarderArgv({
        runtime,
        port: PORT,
        socketPath: `${MOUNT}/model.sock`,
        command: ['node', '-e', CLIENT, `http://127.0.0.1:${PORT}/v1`, proxy.token, hostPort],
      });
      const run = await runInSandbox(socketDir, cmd);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as ClientReport;

      expect(report.plain.status).toBe(200);
      expect(report.plain.body).toContain('hello from the model');
      expect(report.stream.status).toBe(200);
      expect(report.stream.body).toContain('event: message_stop');
      expect(report.echo.status).toBe(401);
      expect(report.echo.body).toContain('[REDACTED]');
      expect(report.wrong.status).toBe(401);
      expect(upstream.requests).toHaveLength(3);
      // The echo test can fail: the provider did get the key.
      expect(upstream.requests[2]?.headers.authorization).toBe(`Bearer ${KEY}`);

      // No address but the forwarder: not the provider on the host, not the bridge, not out.
      expect(Object.values(report.reach)).not.toContain('connected');
      expect(Object.keys(report.reach)).toHaveLength(4);
      expect(report.mount).toBe(true);

      // The key is nowhere the sandbox can see: answers, headers, errors, any process's
      // environment or argv, or the container's configuration.
      expect(run.stdout).not.toContain(KEY);
      expect(run.stdout).not.toContain(KEY.slice(8, 30));
      expect(run.config).not.toContain(KEY);
      expect(report.procs.length).toBeGreaterThan(1);

      const trajectory = JSON.stringify(proxy.trajectory());
      expect(trajectory).not.toContain(KEY);
      expect(trajectory).not.toContain(proxy.token);
      expect(proxy.trajectory().totals.turns).toBe(3);
    },
    120_000,
  );

  it('runs no command when the forwarder cannot listen, and passes a command’s exit status on', async () => {
    const upstream = await startProtocolServer();
    const { proxy } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const socketDir = proxy.socketPath.replace(/\/model\.sock$/, '');
    const exit7 = forwarderArgv({
      runtime: 'python',
      port: PORT,
      socketPath: `${MOUNT}/model.sock`,
      command: ['sh', '-c', 'exit 7'],
    });
    expect((await runInSandbox(socketDir, exit7)).code).toBe(7);
    // A port already taken (by a first forwarder, whose command is the second).
    const inner = forwarderArgv({
      runtime: 'node',
      port: PORT,
      socketPath: `${MOUNT}/model.sock`,
      command: ['sh', '-c', 'echo agent ran'],
    });
    const outer = forwarderArgv({
      runtime: 'node',
      port: PORT,
      socketPath: `${MOUNT}/model.sock`,
      command: inner,
    });
    const run = await runInSandbox(socketDir, outer);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^proctor forwarder: cannot listen on 127\.0\.0\.1:8787: .*EADDRINUSE/,
    );
  }, 120_000);
});
