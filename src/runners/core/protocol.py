# ---- the run protocol: the shared core (src/runners/core/protocol.py in Proctor) -----------
#
# The same bytes are in every built-in runner written in Python (Proctor writes this part into
# each when it writes the runner into a bundle); edit src/runners/core/protocol.py, not a
# runner's copy.
#
# What every such runner does the same way, whatever its framework:
#   read_ids       LIST, one ID a line, as Proctor writes it;
#   write_report   REPORT, Proctor's JSON report, written whole or not at all;
#   read_request   a phase's request, one JSON line on stdin: the sentinels' file word and
#                  their names and expected statuses;
#   Collector      the process that runs none of the checkout's code and alone writes the
#                  report: it reads the test side's JSON lines (hello, outcome, cause, tamper,
#                  end) and notes whatever is malformed, repeated, or missing its end;
#   collect_phase, connect_channel, run_piped, dispatch
#                  protocol 2: `--proctor-collect` (the collector, as another uid, one socket
#                  per phase, one connection each), `--proctor-channel` (the test side, as
#                  the task uid) and the plain `run LIST REPORT` (a pipe between the two).
# Each runner adds how it finds, runs and reads its tests, and passes its own values (how a
# sentinel's name is checked, which listed lines are tests) to these functions. Only the
# standard library, and Python 3.5 syntax.
import json
import os
import re
import sys

STATUS_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
EXPECTS = ("passed", "failed", "error")
MAX_MESSAGE = 64 * 1024
MAX_CAUSE_LINES = 30
MAX_CAUSE_CHARS = 3000
SENTINEL_WORD = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def read_ids(path):
    # newline="": a `\r` inside an id is kept, as Proctor keeps it; only one before `\n` goes.
    with open(path, encoding="utf-8", newline="") as f:
        lines = [line[:-1] if line.endswith("\r") else line for line in f.read().split("\n")]
    ids = []
    seen = set()
    for line in lines:
        if line.strip() == "" or line in seen:
            continue
        seen.add(line)
        ids.append(line)
    return ids


def write_report(path, tests, integrity=None, swebench=None, cause=None):
    """Writes REPORT: `tests` is {id: status} (with `swebench`, {id: SWE-bench status}) or the
    report's entries themselves. Through a temporary file, so that a reader never sees half.
    Returns the bytes written."""
    if isinstance(tests, dict):
        swebench = swebench or {}
        entries = []
        for test_id, status in tests.items():
            entry = {"id": test_id, "status": status}
            if test_id in swebench:
                entry["swebench"] = swebench[test_id]
            entries.append(entry)
    else:
        entries = list(tests)
    body = {"schema": 1, "tests": entries}
    if integrity is not None:
        body["integrity"] = integrity
    if cause:
        body["cause"] = cause
    data = (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return data


def first_lines(text, order=None):
    """The first lines of an error, bounded, for a report's `cause`; `order`, when given, puts
    the lines that say most first (the dialect knows which)."""
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    if order is not None:
        lines = order(lines)
    return "\n".join(lines[:MAX_CAUSE_LINES])[:MAX_CAUSE_CHARS]


def sentinel_word(word):
    """A sentinel's word for runners whose sentinel names become other languages' names:
    lower-case words of letters and digits joined by single underscores."""
    return isinstance(word, str) and SENTINEL_WORD.match(word) is not None


def identifier_word(word):
    """A sentinel's word for the Python runners: a lower-case Python identifier."""
    return isinstance(word, str) and word.isidentifier() and word.islower()


def camel(name):
    """A sentinel's word as a CamelCase name (`must_pass` -> `MustPass`), for the languages
    whose test names take that form."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def read_request(stream, word_ok=sentinel_word):
    """A phase's request, one JSON line of `stream`: {"file": WORD, "sentinels": [{"name":
    WORD, "expect": "passed|failed|error"}, …], …}; a word `word_ok` refuses is an error."""
    line = stream.readline(MAX_MESSAGE)
    request = json.loads(line)
    word = request["file"]
    sentinels = request["sentinels"]
    if not word_ok(word):
        raise ValueError("bad sentinel file word")
    for s in sentinels:
        if not word_ok(s["name"]) or s["expect"] not in EXPECTS:
            raise ValueError("bad sentinel")
    return request


def read_file(path):
    """A regular file's bytes (never through a link), or None."""
    try:
        if os.path.islink(path) or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def sender(fd):
    """A function that writes one message, a JSON line, to `fd`, whole."""
    def send(message):
        data = (json.dumps(message, ensure_ascii=True) + "\n").encode("ascii")
        while data:
            data = data[os.write(fd, data):]
    return send


# ---- collecting outcomes (runs none of the checkout's code) ---------------------------------


class MessageReader:
    """Reads the test side's stream, one JSON line a message, bounded; what is wrong with it is
    a problem the oracle refuses. `feed` takes one line."""

    def __init__(self):
        self.problems = []

    def problem(self, text):
        if len(self.problems) < 20:
            self.problems.append(text[:300])

    def feed(self, line):
        raise NotImplementedError

    def feed_stream(self, stream):
        buffer = b""
        while True:
            chunk = stream.read(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self.feed(line.decode("utf-8", "replace"))
            if len(buffer) > MAX_MESSAGE:
                self.problem("a message over %d bytes" % MAX_MESSAGE)
                buffer = b""
        if buffer:
            self.problem("the stream ended inside a message")


class Collector(MessageReader):
    """Turns the test side's messages into the report. Anything malformed, a test reported
    twice, or a stream without its end is noted; the oracle refuses it.

    `sentinels` is the phase's sentinels, [(name, reported id, expect, …), …] (None without a
    request); `owes(test_id)` says whether a listed line not reported is a test that must be
    reported (an `error` when the session did not end), not a path; `swebench_rank` orders
    SWE-bench's statuses, the worst of a name's outcomes kept; `cause_order` is first_lines's
    `order` for a cause."""

    says_started = True

    def __init__(self, ids, sentinels, owes=None, swebench_rank=None, cause_order=None):
        MessageReader.__init__(self)
        sentinels = sentinels or []
        self.listed = list(ids)
        self.sentinel_ids = {s[1]: s[0] for s in sentinels}
        self.expects = {s[0]: s[2] for s in sentinels}
        self.owes = owes or (lambda test_id: True)
        self.swebench_rank = swebench_rank or {}
        self.cause_order = cause_order
        self.tests = {}
        self.swebench = {}
        self.cause = None
        self.sentinels = {}
        self.seen = set()
        self.tampered = []
        self.ended = False
        self.started = False

    def record(self, test_id, status, swebench=None):
        if test_id in self.sentinel_ids:
            old = self.sentinels.get(test_id)
            if old is None or STATUS_RANK[status] > STATUS_RANK[old]:
                self.sentinels[test_id] = status
            return
        old = self.tests.get(test_id)
        if old is None or STATUS_RANK[status] > STATUS_RANK[old]:
            self.tests[test_id] = status
        self.keep_swebench(test_id, swebench)

    def keep_swebench(self, test_id, swebench):
        if swebench in self.swebench_rank:
            old = self.swebench.get(test_id)
            if old is None or self.swebench_rank[swebench] > self.swebench_rank[old]:
                self.swebench[test_id] = swebench

    def on_cause(self, message):
        """Why the tests could not run (a build that failed, a test process that died): quoted,
        never graded, so accepted whenever it comes."""
        text = message.get("text")
        if self.cause is None and isinstance(text, str) and text.strip():
            self.cause = first_lines(text, self.cause_order)

    def on_outcome(self, message, line):
        key = (message.get("node"), message.get("when"))
        status = message.get("status")
        ids = message.get("ids")
        if status not in STATUS_RANK or not isinstance(ids, list):
            self.problem("a malformed outcome: %r" % line[:100])
            return
        if key in self.seen:
            self.tampered.append("%s reported twice for its %s" % key)
            return
        self.seen.add(key)
        for test_id in ids:
            if isinstance(test_id, str):
                self.record(test_id, status, message.get("sb"))

    def feed(self, line):
        try:
            message = json.loads(line)
            kind = message["t"]
        except Exception:
            kind = None
        if kind == "cause":
            self.on_cause(message)
            return
        if self.ended:
            self.problem("a message after the end of the session")
            return
        if kind is None:
            self.problem("a malformed message: %r" % line[:100])
            return
        if kind == "hello":
            self.started = True
        elif not self.started:
            self.problem("a message before the session started")
        elif kind == "outcome":
            self.on_outcome(message, line)
        elif kind == "tamper":
            self.tampered.append(str(message.get("what"))[:300])
        elif kind == "end":
            self.ended = True
        else:
            self.problem("an unknown message %r" % kind)

    def sentinel_status(self, name):
        """What a sentinel reported: its expected status when every copy reported it, else
        the first copy's other status (None for a copy never reported)."""
        expect = self.expects[name]
        for sid, owner in self.sentinel_ids.items():
            if owner == name and self.sentinels.get(sid) != expect:
                return self.sentinels.get(sid)
        return expect

    def finish(self, with_integrity):
        """The report's tests and integrity. Without an end, every listed test not reported
        is an error (the test side ended before it could say)."""
        complete = self.started and self.ended
        if not complete:
            for test_id in self.listed:
                if test_id not in self.tests and self.owes(test_id):
                    self.tests[test_id] = "error"
                    self.swebench[test_id] = "ABSENT"
        if not with_integrity:
            return self.tests, None
        integrity = {
            "protocol": 2,
            "complete": complete,
            "problems": self.problems,
            "tampered": self.tampered,
            "sentinels": [{"name": n, "status": self.sentinel_status(n)} for n in self.expects],
        }
        if self.says_started:
            # False when the test side stopped before its session began (a build that failed,
            # a conftest.py that did not import): no test ran; the report's cause says why.
            integrity["started"] = self.started
        return self.tests, integrity


# ---- protocol 2: the collector's socket, the test side's connection, the plain run ----------


def collect_phase(out_dir, make_collector):
    """The collector's side of one phase: makes `out_dir` and the socket `out_dir`/channel,
    takes one connection (later ones are refused) and feeds what comes through it to the
    collector `make_collector()` returns, made once the test side has connected."""
    import socket

    os.mkdir(out_dir, 0o755)
    os.chmod(out_dir, 0o755)
    channel = os.path.join(out_dir, "channel")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(channel)
    os.chmod(channel, 0o666)
    server.listen(1)
    connection, _ = server.accept()
    server.close()  # one connection: later ones are refused
    collector = make_collector()
    with connection.makefile("rb") as stream:
        collector.feed_stream(stream)
    return collector


def collect_phases(phases, make_collector, read=read_request, before=None, when_connected=False):
    """`run --proctor-collect LIST DIR [LIST DIR …]` (as another uid, in the checkout, before
    any test runs): one collector for the
    evaluation's phases, in order, each with its request on a line of stdin (read first, all of
    them), and DIR/report, which the task uid cannot touch, once its connection closes.
    `make_collector(ids, request)` makes a phase's collector, first or, `when_connected`, once
    the test side has connected (the phase's checkout is then laid); `before(request)`, when
    given, runs before the phase's socket is made. A collector's report is {id: status} with
    its `swebench` and `cause`, or its entries with its `cause`."""
    requests = [read(sys.stdin) for _ in phases]
    for index, ((list_file, out_dir), request) in enumerate(zip(phases, requests)):
        ids = read_ids(list_file)
        made = None if when_connected else make_collector(ids, request)
        if before is not None:
            before(request)
        collector = collect_phase(out_dir, lambda: made if made is not None else make_collector(ids, request))
        tests, integrity = collector.finish(True)
        data = write_report(os.path.join(out_dir, "report"), tests, integrity, collector.swebench,
                            collector.cause)
        if index == len(phases) - 1:
            print_report(data)
    return 0


# The most bytes of a last report print_report puts on stdout (the host reads a longer one from
# the file); the host's limit on the collector's output leaves room for its base64.
PRINTED_REPORT_MAX = 1024 * 1024


def print_report(data):
    """The evaluation's last report (the bytes write_report wrote) on stdout as well, framed:
    `proctor-report SIZE`, its bytes in base64 on one line, `proctor-report-end`. The host takes
    it from this process's output when the collector has ended, where it would otherwise start a
    process of the task's uid to read the file; the frame is the last thing the collector
    prints."""
    import base64

    if len(data) > PRINTED_REPORT_MAX:
        return
    out = sys.stdout.buffer
    out.write(("proctor-report %d\n" % len(data)).encode("ascii"))
    out.write(base64.b64encode(data))
    out.write(b"\nproctor-report-end\n")
    out.flush()


def connect_channel(channel):
    """The test side's connection to the collector's socket (the collector may still be making
    it: tried for 30 seconds); None, said on stderr, when there is none."""
    import socket
    import time

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + 30
    while True:
        try:
            sock.connect(channel)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                sys.stderr.write("proctor: no collector at %s\n" % channel)
                sock.close()
                return None
            time.sleep(0.002)


def tee_stderr(stream, head, quiet=False):
    """Copies a child's output `stream` to this process's stderr as it comes (not `quiet`); its
    first 64 KiB go to the list `head` (a cause is read from them)."""
    kept = 0
    out = None if quiet else getattr(sys.stderr, "buffer", None)
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        if kept < 65536:
            head.append(chunk[:65536 - kept])
            kept += len(head[-1])
        if out is not None:
            try:
                out.write(chunk)
                out.flush()
            except (OSError, ValueError):
                out = None
    stream.close()


def run_piped(collector, run):
    """`run LIST REPORT` without the oracle: `run(fd)` runs the tests with their outcomes going
    into a pipe, which `collector` reads in a thread of this process; returns run's code."""
    import threading

    read_end, write_end = os.pipe()
    reader = threading.Thread(target=collector.feed_stream, args=(os.fdopen(read_end, "rb"),))
    reader.start()
    try:
        code = run(write_end)
    finally:
        os.close(write_end)
    reader.join()
    return code


def run_plain(list_file, report, make_collector, run, unended=None):
    """`run LIST REPORT` without the oracle: `run(ids, fd)` runs the tests with their outcomes
    going into a pipe, the collector `make_collector(ids, None)` reads them in this process and
    the report is written; `unended`, when given, is said on stderr when the session did not
    end. Returns run's code."""
    ids = read_ids(list_file)
    collector = make_collector(ids, None)
    code = run_piped(collector, lambda fd: run(ids, fd))
    tests, _ = collector.finish(False)
    for what in collector.tampered:
        sys.stderr.write("proctor: tripwire: %s\n" % what)
    write_report(report, tests, swebench=collector.swebench, cause=collector.cause)
    if unended and not (collector.started and collector.ended):
        sys.stderr.write("proctor: %s\n" % unended)
    return code


def dispatch(argv, collect, channel, plain, canary=None, test_side=None):
    """The runner's command line: `--proctor-canary WORKTREE LIST SEED` (when the runner has
    `canary`), `--proctor-collect LIST DIR [LIST DIR …]`, `--proctor-channel SOCKET LIST`, or
    `LIST REPORT`, each path made absolute. `test_side(argv)`, when given, runs before the
    last two (which run the checkout's tests), never before the first two."""
    if canary is not None and len(argv) == 5 and argv[1] == "--proctor-canary":
        # The trusted step, on the image's python3: see core/canary.py.
        return canary(argv[2:])
    if len(argv) >= 4 and len(argv) % 2 == 0 and argv[1] == "--proctor-collect":
        pairs = argv[2:]
        return collect([(os.path.abspath(pairs[i]), pairs[i + 1]) for i in range(0, len(pairs), 2)])
    if test_side is not None:
        test_side(argv)
    if len(argv) == 4 and argv[1] == "--proctor-channel":
        return channel(argv[2], os.path.abspath(argv[3]))
    if len(argv) != 3:
        sys.stderr.write("usage: run LIST REPORT\n")
        return 2
    return plain(os.path.abspath(argv[1]), os.path.abspath(argv[2]))


def main_simple(argv, run, make_collector, read=read_request, canary=None):
    """The whole command line of a runner whose test side is this process: `run(ids, fd,
    request)` runs the listed tests (and the request's sentinels, when there is one) with their
    outcomes going to `fd`, and returns the exit code; `make_collector(ids, request)` makes the
    collector (request None in a plain run); `canary`, when the runner places canaries, the
    trusted step (core/canary.py's main_canary)."""

    def plain(list_file, report):
        return run_plain(list_file, report, make_collector, lambda ids, fd: run(ids, fd, None))

    def channel(path, list_file):
        request = read(sys.stdin)
        ids = read_ids(list_file)
        sock = connect_channel(path)
        if sock is None:
            return 2
        try:
            return run(ids, sock.fileno(), request)
        finally:
            sock.close()

    return dispatch(argv, lambda phases: collect_phases(phases, make_collector, read), channel, plain,
                    canary)


# ---- end of the run protocol ----------------------------------------------------------------
