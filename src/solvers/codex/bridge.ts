// The MCP bridge: the stdio MCP server Codex starts (`node dist/solvers/codex/bridge.js`).
// Codex has no Unix-socket transport, so this process connects to the run's socket
// (mcp-server.ts), presents the capability token, and then only copies bytes: stdin → socket,
// socket → stdout. It parses no MCP and holds no state, so it can be read at a glance.
//
// A standalone process: its one input is its environment, which Codex fills from its own via
// `env_vars` (the token is never in argv, where /proc/<pid>/cmdline would show it). Both
// variables are deleted at once so that nothing this process might start inherits them.
//
// Exit status: 0 when either side closes after the handshake; 1, with one line on stderr, when
// the socket cannot be reached, refuses the token, answers anything but `PROCTOR-MCP OK`, or
// does not answer within 10 s (Codex then fails at startup, the server being required).
// The handshake strings must match mcp-server.ts; the tests run the two together.
import { connect } from 'node:net';

const ACCEPTED = 'PROCTOR-MCP OK\n';
/** The longest reply line read (the longest real one is 17 bytes). */
const REPLY_BYTES = 64;
const HANDSHAKE_TIMEOUT_MS = 10_000;

const socketPath = process.env['PROCTOR_MCP_SOCKET'];
const token = process.env['PROCTOR_MCP_TOKEN'];
delete process.env['PROCTOR_MCP_SOCKET'];
delete process.env['PROCTOR_MCP_TOKEN'];

function fail(message: string): never {
  process.stderr.write(`proctor MCP bridge: ${message}\n`);
  process.exit(1);
}

if (!socketPath || !token) fail('PROCTOR_MCP_SOCKET and PROCTOR_MCP_TOKEN must both be set');

let accepted = false;
let reply = Buffer.alloc(0);
const socket = connect(socketPath);
const timer = setTimeout(() => fail('no handshake reply within 10 s'), HANDSHAKE_TIMEOUT_MS);

socket.on('connect', () => socket.write(`PROCTOR-MCP ${token}\n`));

const onReply = (chunk: Buffer): void => {
  reply = Buffer.concat([reply, chunk]);
  const end = reply.indexOf(0x0a);
  if (end === -1 && reply.length <= REPLY_BYTES) return;
  const line = reply.toString('utf8', 0, end === -1 ? REPLY_BYTES : end + 1);
  if (line !== ACCEPTED) fail(`handshake refused: ${JSON.stringify(line.trim())}`);
  // Paused before the listener goes, so that no byte after the reply line is lost.
  socket.pause();
  socket.off('data', onReply);
  clearTimeout(timer);
  accepted = true;
  process.stdout.write(reply.subarray(end + 1));
  socket.pipe(process.stdout); // never ends stdout; 'close' below exits
  process.stdin.pipe(socket); // ends the socket when stdin ends
};
socket.on('data', onReply);

socket.on('error', (error) => {
  if (!accepted) fail(`cannot use ${socketPath}: ${error.message}`);
  process.stderr.write(`proctor MCP bridge: ${error.message}\n`);
  process.exitCode = 1;
});
socket.on('close', () => {
  if (!accepted) fail('handshake refused: the socket closed');
  process.stdout.write('', () => process.exit());
});
// Codex went away: nothing is left to do.
process.stdout.on('error', () => process.exit());
