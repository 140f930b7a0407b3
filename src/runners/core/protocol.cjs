// ---- the run protocol for the JavaScript runners (src/runners/core/protocol.cjs in Proctor) --
//
// The same bytes are in the mocha and karma runners (Proctor writes this part into each when it
// writes the runner into a bundle); edit src/runners/core/protocol.cjs, not a runner's copy. It
// is core/protocol.py's counterpart for a runner that is a CommonJS program: reading LIST,
// writing REPORT, reading a phase's request, the collector that runs none of the checkout's
// code and alone writes the report, and the command line (`--proctor-collect`,
// `--proctor-channel`, `LIST REPORT`). The runner requires node:fs, node:net and node:path as
// fs, net and path first, and defines sentinelId(name) (a sentinel's test ID), mainPlain and
// mainChannel.

const RANK = { passed: 0, skipped: 1, failed: 2, error: 3 };
const SB_RANK = { ABSENT: -1, PASSED: 0, FAILED: 1 };
const EXPECTS = ["passed", "failed", "error"];
const MAX_MESSAGE = 64 * 1024;
const MAX_CAUSE_LINES = 30;
const MAX_CAUSE_CHARS = 3000;

function readIds(list) {
  const lines = fs.readFileSync(list, "utf8").split("\n");
  const ids = lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  return [...new Set(ids.filter((id) => id.trim() !== ""))];
}

const line = (message) => JSON.stringify(message) + "\n";

function firstLines(text) {
  const lines = text.replace(/^\n+|\n+$/g, "").split("\n").map((l) => l.trimEnd());
  return lines.slice(0, MAX_CAUSE_LINES).join("\n").slice(0, MAX_CAUSE_CHARS);
}

const discovering = () => process.env.PROCTOR_DISCOVER === "1";

function readRequest(text) {
  const request = JSON.parse(text);
  const word = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
  if (typeof request.file !== "string" || !word.test(request.file)) throw new Error("bad sentinel file word");
  if (!Array.isArray(request.sentinels)) throw new Error("bad sentinels");
  for (const s of request.sentinels) {
    if (typeof s?.name !== "string" || !word.test(s.name) || !EXPECTS.includes(s.expect)) {
      throw new Error("bad sentinel");
    }
  }
  return request;
}

/** Turns the test side's messages into the report. Anything malformed, a test reported twice,
 * or a stream without its end is noted; the oracle refuses it. */
class Collector {
  constructor(ids, request) {
    this.listed = ids;
    this.sentinelIds = new Map((request?.sentinels ?? []).map((s) => [sentinelId(s.name), s]));
    this.tests = new Map();
    this.swebench = new Map();
    this.sentinels = new Map();
    this.seen = new Set();
    this.problems = [];
    this.tampered = [];
    this.cause = null;
    this.started = false;
    this.ended = false;
    this.buffer = "";
  }

  problem(text) {
    if (this.problems.length < 20) this.problems.push(text.slice(0, 300));
  }

  record(id, status, sb) {
    const worst = (map, key, value, rank) => {
      const old = map.get(key);
      if (old === undefined || rank[value] > rank[old]) map.set(key, value);
    };
    if (this.sentinelIds.has(id)) return worst(this.sentinels, id, status, RANK);
    worst(this.tests, id, status, RANK);
    if (sb in SB_RANK) worst(this.swebench, id, sb, SB_RANK);
  }

  feed(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      message = null;
    }
    const kind = message?.t;
    if (kind === "cause") {
      // Why the tests could not run: quoted, never graded, so accepted whenever it comes.
      if (this.cause === null && typeof message.text === "string" && message.text.trim() !== "") {
        this.cause = firstLines(message.text);
      }
      return;
    }
    if (kind === "tamper") {
      // From the runner's own process (a line without the key), whenever it comes.
      if (this.tampered.length < 100) this.tampered.push(String(message.what).slice(0, 300));
      return;
    }
    if (this.ended) return this.problem("a message after the end of the session");
    if (message === null) return this.problem(`a malformed message: ${JSON.stringify(text.slice(0, 100))}`);
    if (kind === "hello") this.started = true;
    else if (!this.started) this.problem("a message before the session started");
    else if (kind === "outcome") {
      if (!(message.status in RANK) || !Array.isArray(message.ids)) {
        return this.problem(`a malformed outcome: ${text.slice(0, 100)}`);
      }
      const key = `${message.node}\0${message.when}`;
      if (this.seen.has(key)) {
        if (this.tampered.length < 100) this.tampered.push(`${String(message.node).slice(0, 200)} reported twice`);
        return;
      }
      this.seen.add(key);
      for (const id of message.ids) if (typeof id === "string") this.record(id, message.status, message.sb);
    } else if (kind === "end") this.ended = true;
    else this.problem(`an unknown message ${JSON.stringify(String(kind).slice(0, 50))}`);
  }

  feedChunk(chunk) {
    this.buffer += chunk;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop();
    for (const text of lines) this.feed(text);
    if (this.buffer.length > MAX_MESSAGE) {
      this.problem(`a message over ${MAX_MESSAGE} bytes`);
      this.buffer = "";
    }
  }

  /** The report. Without an end, every listed test not reported is an error (the run ended
   * before it could say). */
  finish(withIntegrity) {
    if (this.buffer !== "") this.problem("the stream ended inside a message");
    const complete = this.started && this.ended;
    if (!complete && !discovering()) {
      for (const id of this.listed) {
        if (!this.tests.has(id)) {
          this.tests.set(id, "error");
          this.swebench.set(id, "ABSENT");
        }
      }
    }
    const tests = [...this.tests].map(([id, status]) => {
      const entry = { id, status };
      if (this.swebench.has(id)) entry.swebench = this.swebench.get(id);
      return entry;
    });
    const body = { schema: 1, tests };
    if (withIntegrity) {
      body.integrity = {
        protocol: 2,
        complete,
        started: this.started,
        problems: this.problems,
        tampered: this.tampered,
        sentinels: [...this.sentinelIds].map(([id, s]) => ({ name: s.name, status: this.sentinels.get(id) ?? null })),
      };
    }
    if (this.cause !== null) body.cause = this.cause;
    return body;
  }
}

function writeReport(file, report) {
  const tmp = `${file}.tmp`;
  const data = Buffer.from(JSON.stringify(report, null, 1) + "\n");
  fs.writeFileSync(tmp, data, { mode: 0o644 });
  fs.chmodSync(tmp, 0o644);
  fs.renameSync(tmp, file);
  return data;
}

/** The most bytes of a last report printReport puts on stdout (the host reads a longer one from
 * the file); the host's limit on the collector's output leaves room for its base64. */
const PRINTED_REPORT_MAX = 1024 * 1024;

/** The evaluation's last report (the bytes writeReport wrote) on stdout as well, framed:
 * `proctor-report SIZE`, its bytes in base64 on one line, `proctor-report-end`. The host takes
 * it from this process's output when the collector has ended, where it would otherwise start a
 * process of the task's uid to read the file; the frame is the last thing the collector prints
 * (a synchronous write). */
function printReport(data) {
  if (data.length > PRINTED_REPORT_MAX) return;
  fs.writeSync(1, `proctor-report ${data.length}\n${data.toString("base64")}\nproctor-report-end\n`);
}

/** The first `count` lines of stdin, each a request. */
async function readRequests(count) {
  let text = "";
  for await (const chunk of process.stdin) {
    text += chunk;
    if (text.split("\n").length > count || text.length > MAX_MESSAGE * count) break;
  }
  return text.split("\n").slice(0, count).map(readRequest);
}

/** `run --proctor-collect LIST DIR [LIST DIR …]`: as another uid, in the checkout, before any
 * test runs; one collector for the evaluation's phases, each with its request on a line of
 * stdin. For each it makes DIR and the socket DIR/channel, takes one connection, and writes
 * DIR/report, which the tests cannot touch, once the connection closes. */
async function mainCollect(phases) {
  const requests = await readRequests(phases.length);
  for (const [index, [list, out]] of phases.entries()) {
    const collector = new Collector(readIds(list), requests[index]);
    fs.mkdirSync(out, { mode: 0o755 });
    fs.chmodSync(out, 0o755);
    const channel = path.join(out, "channel");
    await new Promise((done, fail) => {
      const server = net.createServer((connection) => {
        server.close(); // one connection: later ones are refused
        connection.setEncoding("utf8");
        connection.on("data", (chunk) => collector.feedChunk(chunk));
        connection.on("error", () => {});
        connection.on("close", done);
      });
      server.on("error", fail);
      server.listen(channel, () => fs.chmodSync(channel, 0o666));
    });
    const data = writeReport(path.join(out, "report"), collector.finish(true));
    if (index === phases.length - 1) printReport(data);
  }
  return 0;
}

function connect(socketPath, deadline) {
  return new Promise((done, fail) => {
    const socket = net.createConnection(socketPath);
    socket.once("connect", () => done(socket));
    socket.once("error", (error) => {
      if (Date.now() > deadline) return fail(error);
      setTimeout(() => connect(socketPath, deadline).then(done, fail), 10);
    });
  });
}

async function main(argv) {
  if (argv.length >= 3 && argv.length % 2 === 1 && argv[0] === "--proctor-collect") {
    const phases = [];
    for (let i = 1; i < argv.length; i += 2) phases.push([path.resolve(argv[i]), argv[i + 1]]);
    return mainCollect(phases);
  }
  if (argv.length === 3 && argv[0] === "--proctor-channel") return mainChannel(argv[1], path.resolve(argv[2]));
  if (argv.length !== 2) {
    console.error("usage: run LIST REPORT");
    return 2;
  }
  return mainPlain(path.resolve(argv[0]), path.resolve(argv[1]));
}

// ---- end of the run protocol for the JavaScript runners ------------------------------------
