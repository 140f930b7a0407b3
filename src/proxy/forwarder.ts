// The in-sandbox side of the model proxy: a loopback forwarder the agent reaches as
// `http://127.0.0.1:PORT`. It listens on 127.0.0.1 inside the container (network none leaves
// only loopback) and pipes each connection, bytes only, to the proxy's Unix socket mounted
// from the host. It parses nothing and holds nothing: the token the agent presents is checked
// on the host, and no key ever passes through it.
//
// Two self-contained sources, injected by the agent adapter and run from argv (no file needs to
// be written into a read-only root): Node's, since npm agents bring Node (any version from 12
// on; CommonJS, built-in modules only), and Python's (3.7 on, standard library only) for agents
// installed from PyPI. Both take the same arguments:
//
//   PORT SOCKET [-- COMMAND ARGS…]
//
// Without a command the forwarder prints `listening 127.0.0.1:PORT` on stdout once it accepts
// connections (PORT 0 picks a free port, printed there) and runs until killed. With a command
// it starts it only once listening, so the agent never races its own route to the model, passes
// SIGTERM and SIGINT on, and exits with its status (128 + signal when it was killed).
//
// Each forwarder gives the command pipes of its own for stdout and stderr, drained at once into
// its own (Node's buffered in memory, the exec's flood bound and the memory limit bounding them;
// Python's by threads, so a slow reader never stalls the model traffic).
// Inheriting the exec's pipes, an agent shared their open file description with everything
// else that writes there: Codex was seen to die with EAGAIN ("failed printing to stdout:
// Resource temporarily unavailable") when that pipe was non-blocking and its reader slow. Once
// the command has exited, its output is whole when its pipes close; a process it left behind
// that still holds them gets 2 s, and the forwarder then exits with the command's status rather
// than hang the run until its deadline. A port it cannot listen on is one line on stderr and
// exit 1, before any command starts.

/** The Node forwarder's source: run it as `node -e SOURCE PORT SOCKET [-- COMMAND…]`. */
export const FORWARDER_NODE_SOURCE = String.raw`'use strict';
const net = require('net');
const { spawn } = require('child_process');
const args = process.argv.slice(require.main ? 2 : 1);
const port = Number(args[0]);
const socketPath = args[1];
const command = args[2] === '--' ? args.slice(3) : [];
const HELD = 8 * 1024 * 1024;
if (!Number.isInteger(port) || port < 0 || port > 65535 || !socketPath || (args.length > 2 && args[2] !== '--')) {
  process.stderr.write('proctor forwarder: usage: PORT SOCKET [-- COMMAND ARGS...]\n');
  process.exit(2);
}
const server = net.createServer({ allowHalfOpen: true }, (client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
  const drop = () => { client.destroy(); upstream.destroy(); };
  client.on('error', drop);
  upstream.on('error', drop);
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (error) => {
  process.stderr.write('proctor forwarder: cannot listen on 127.0.0.1:' + port + ': ' + error.message + '\n');
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  if (command.length === 0) {
    process.stdout.write('listening 127.0.0.1:' + server.address().port + '\n');
    return;
  }
  const child = spawn(command[0], command.slice(1), { stdio: ['inherit', 'pipe', 'pipe'] });
  // At most HELD bytes wait for our reader; past that the command's pipe is left to fill, so
  // that an agent printing without end is held back (and counted as a flood by the exec's
  // reader) instead of growing this process to the memory limit.
  const relay = (from, to) => from.on('data', (chunk) => {
    if (!to.write(chunk) && to.writableLength > HELD) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write('proctor forwarder: cannot start ' + command[0] + ': ' + error.message + '\n');
    process.exit(127);
  });
  let status = null;
  const finish = () => process.stdout.write('', () => process.stderr.write('', () => process.exit(status)));
  child.on('exit', (code, signal) => {
    status = code === null ? 128 + (require('os').constants.signals[signal] || 0) : code;
    // Its output is whole once its pipes close; a process it left behind may hold them open.
    setTimeout(finish, 2000).unref();
  });
  child.on('close', () => { if (status !== null) finish(); });
});
`;

/** The Python forwarder's source: run it as `python3 -c SOURCE PORT SOCKET [-- COMMAND…]`. */
export const FORWARDER_PYTHON_SOURCE = String.raw`import asyncio, collections, os, select, signal, subprocess, sys, threading, time
args = sys.argv[1:]
try:
    port, path = int(args[0]), args[1]
    assert 0 <= port <= 65535 and path and (len(args) == 2 or args[2] == '--')
except (IndexError, ValueError, AssertionError):
    sys.stderr.write('proctor forwarder: usage: PORT SOCKET [-- COMMAND ARGS...]\n')
    sys.exit(2)
command = args[3:]
HELD = 8 * 1024 * 1024

async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        pass

async def handle(client_reader, client_writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_unix_connection(path)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
    upstream_writer.close()
    client_writer.close()

def write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError:
            return

def copy(source, target):
    # Read at once, whatever our own reader does (so the command's pipe never fills and a
    # non-blocking writer never sees EAGAIN), and written by a second thread: a slow reader of
    # ours holds up neither the command nor the model traffic. The exec's flood bound and the
    # memory limit bound what waits here.
    chunks, ready, held = collections.deque(), threading.Condition(), [0]
    def read():
        while True:
            try:
                data = os.read(source, 65536)
            except OSError:
                data = b''
            with ready:
                # Past HELD bytes the command's pipe is left to fill: endless output is held
                # back rather than grown to the memory limit.
                while held[0] > HELD:
                    ready.wait()
                chunks.append(data)
                held[0] += len(data)
                ready.notify_all()
            if not data:
                return
    threading.Thread(target=read, daemon=True).start()
    while True:
        with ready:
            while not chunks:
                ready.wait()
            data = chunks.popleft()
            held[0] -= len(data)
            ready.notify_all()
        if not data:
            return
        write_all(target, data)

async def main():
    try:
        server = await asyncio.start_server(handle, '127.0.0.1', port)
    except OSError as error:
        sys.stderr.write('proctor forwarder: cannot listen on 127.0.0.1:%d: %s\n' % (port, error))
        sys.exit(1)
    if not command:
        print('listening 127.0.0.1:%d' % server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()
    sys.stdout.flush()
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        sys.stderr.write('proctor forwarder: cannot start %s: %s\n' % (command[0], error))
        sys.stderr.flush()
        os._exit(127)
    copiers = [threading.Thread(target=copy, args=(child.stdout.fileno(), 1), daemon=True),
               threading.Thread(target=copy, args=(child.stderr.fileno(), 2), daemon=True)]
    for copier in copiers:
        copier.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, child.send_signal, sig)
    exited = loop.create_future()
    threading.Thread(target=lambda: loop.call_soon_threadsafe(exited.set_result, child.wait()), daemon=True).start()
    code = await exited
    # Its output is whole once its pipes close; a process it left behind may hold them open.
    until = time.monotonic() + 2
    for copier in copiers:
        copier.join(max(0, until - time.monotonic()))
    os._exit(code if code >= 0 else 128 - code)

asyncio.run(main())
`;

export type ForwarderRuntime = 'node' | 'python';

/**
 * The argv that runs the forwarder with `runtime` (the interpreter's path or name first), for
 * `port` and the socket's path inside the container, then `command` if given.
 */
export function forwarderArgv(options: {
  runtime: ForwarderRuntime;
  interpreter?: string;
  port: number;
  socketPath: string;
  command?: readonly string[];
}): string[] {
  const { runtime, port, socketPath, command = [] } = options;
  const interpreter = options.interpreter ?? (runtime === 'node' ? 'node' : 'python3');
  const source = runtime === 'node' ? FORWARDER_NODE_SOURCE : FORWARDER_PYTHON_SOURCE;
  const flag = runtime === 'node' ? '-e' : '-c';
  return [
    interpreter,
    flag,
    source,
    String(port),
    socketPath,
    ...(command.length > 0 ? ['--', ...command] : []),
  ];
}
