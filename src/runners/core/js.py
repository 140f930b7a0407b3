# ---- the JavaScript runners' part: the shared core (src/runners/core/js.py in Proctor) ------
#
# The same bytes are in the jest and vitest runners (Proctor writes this part into each when it
# writes the runner into a bundle); edit src/runners/core/js.py, not a runner's copy.
#
# What the two share beyond core/protocol.py: the sentinel test files, which test files run
# (those the hidden patch touches, those whose text holds a listed title), the framework's own
# binary and HEAD's configuration, the channel its reporter connects to (taken only from the
# framework's own process), and the run itself. The runner defines its framework's values
# first: FRAMEWORK, BIN_PATH, FRAMEWORK_IMPORT, CHANNEL_ENV, REPORTER_NAME, REPORTER_SOURCE,
# CONFIG_FILES, SCRIPT_FILE, TEST_FILE, SKIPPED_DIRS, SWEBENCH_RANK, and node_args, own_title,
# name_filter, config_args, command and Results (how its command is made and its reporter's
# results read). Python 3.9.


# ---- sentinels ------------------------------------------------------------------------------


def sentinel_plan(request):
    """The sentinels' ids: [(name, id, expect), …], a test titled `proctor-sentinel NAME`. Pure:
    the collector and the test side compute the same plan (the files' place is the test
    side's business)."""
    return [(s["name"], "proctor-sentinel " + s["name"], s["expect"]) for s in request["sentinels"]]


def sentinel_paths(first, word):
    """The two sentinel files beside the test file `first`, named the way it is (`x.test.ts` ->
    `0-proctor-WORD.test.ts`, `test/index.js` -> `test/0-proctor-WORD.js`), so that the
    project's own test patterns take them: the one whose tests pass or fail, and the one that
    dies before its tests run."""
    folder, base = os.path.split(first)
    match = re.match(r"^.*?((?:[._-](?:test|spec))?\.[cm]?[jt]sx?)$", base)
    suffix = match.group(1) if match else ".test.js"
    return (os.path.join(folder, "0-proctor-%s%s" % (word, suffix)),
            os.path.join(folder, "0-proctor-%s-dies%s" % (word, suffix)))


IMPORT_ESM = re.compile(r"""^import\s+(?!type\b)(?:[^'";]*?\sfrom\s*)?['"]([^'"\n]+)['"]""", re.M)
IMPORT_CJS = re.compile(r"""^(?:(?:const|let|var)\s[^=;]*=\s*)?require\(\s*['"]([^'"\n]+)['"]\s*\)""", re.M)


def imports_of(path):
    """The modules the test file `path` imports at its top level, as side-effect imports in its
    own module style (so that the candidate's code loads in the sentinels' file too)."""
    text = read_text(path) or ""
    esm = IMPORT_ESM.findall(text)
    if esm:
        return ["import %s;" % json.dumps(spec) for spec in esm]
    return ["require(%s);" % json.dumps(spec) for spec in IMPORT_CJS.findall(text)]


def js(text):
    return json.dumps(text, ensure_ascii=True)


def sentinel_sources(plan, first):
    """The two sentinel files' text: the tests that must pass or fail (through the framework's
    own expect, which a forgery that makes assertions pass reaches too), after the first
    listed test file's imports; and the tests that must be `error`, in a file that throws once they
    are declared (its tests never run)."""
    head = [FRAMEWORK_IMPORT] if FRAMEWORK_IMPORT else []
    lines = head + imports_of(first) + [""]
    for number, (_, title, expect) in enumerate(plan):
        if expect == "passed":
            lines.append("test(%s, () => { expect(%d + 1).toBe(%d); });" % (js(title), number, number + 1))
        elif expect == "failed":
            lines.append("test(%s, () => { expect(%d).toBe(%d); });" % (js(title), number, number + 1))
    dying = head + [""]
    for _, title, expect in plan:
        if expect == "error":
            dying.append("test(%s, () => {});" % js(title))
    dying.append('throw new Error("proctor: this test file dies before its tests run");')
    return "\n".join(lines) + "\n", "\n".join(dying) + "\n"


# ---- the request: the sentinels, and the canaries Proctor placed ----------------------------


def read_js_request(stream):
    """A phase's request (core/protocol.py's read_request) with the ids of the canaries
    Proctor placed in the test files (mutants of listed tests, `canaries`), one line each."""
    request = read_request(stream)
    canaries = request.get("canaries", [])
    if not isinstance(canaries, list) or not all(
            isinstance(c, str) and c.strip() and "\n" not in c and "\r" not in c for c in canaries):
        raise ValueError("bad canary ids")
    return request


def with_canaries(ids, request):
    """The listed ids, then the request's canaries: the canaries run, and are reported (or an
    error when the session dies), as listed tests."""
    out = list(ids)
    seen = set(out)
    for canary in (request or {}).get("canaries", []):
        if canary not in seen:
            seen.add(canary)
            out.append(canary)
    return out


# ---- collecting outcomes: core/protocol.py's collector, with this runner's values ----------


def make_collector(ids, request):
    return Collector(with_canaries(ids, request), sentinel_plan(request) if request else None,
                     owes=lambda test_id: os.environ.get("PROCTOR_DISCOVER") != "1", swebench_rank=SWEBENCH_RANK)


# ---- the test side: which files, the framework, its reporter's messages ---------------------


def read_text(path):
    try:
        if os.path.islink(path) or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def patch_test_files():
    """The script files hidden.patch (beside this file) touches and that exist, in its order;
    None when there is no hidden.patch."""
    patch = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "hidden.patch")
    text = read_text(patch)
    if text is None:
        return None
    files = []
    for match in re.finditer(r"^diff --git a/.* b/(.*)$", text, re.M):
        path = match.group(1).strip()
        if path.startswith('"'):
            continue  # a quoted (unusual) path: found by name below instead
        if SCRIPT_FILE.search(path) and os.path.isfile(path) and path not in files:
            files.append(path)
    return files


def walk_test_files(top):
    """The files under `top` that look like tests (TEST_FILE), node_modules and hidden folders
    left out, in walk order."""
    found = []
    if os.path.isfile(top):
        return [os.path.normpath(top)]
    for root, dirs, files in os.walk(top or "."):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = os.path.normpath(os.path.join(root, name))
            if TEST_FILE.search(path.replace(os.sep, "/")):
                found.append(path)
    return found


STRING = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`""")
PLACEHOLDER = re.compile(r"%[sdifjoOp#%]|\\\$\\\{[^}]*\\\}|\\\$[A-Za-z_][\w.]*")


def titles_in(text):
    """A test file's titles as patterns: each string literal, its placeholders (test.each's
    `%s`, `${a}`, `$a`) matching anything."""
    patterns = []
    for match in STRING.finditer(text):
        literal = next(g for g in match.groups() if g is not None)
        # A literal that is little more than placeholders (`%s`, `${name}`) would match anything.
        if len(PLACEHOLDER.sub("", re.escape(literal)).replace("\\", "").strip()) >= 3:
            patterns.append(re.compile(PLACEHOLDER.sub(".*", re.escape(literal)) + r"\Z", re.S))
    return patterns


def defines(path, titles):
    """The titles of `titles` the test file `path` may define."""
    patterns = titles_in(read_text(path) or "")
    return set(t for t in titles if any(p.match(t) for p in patterns))


def find_files(titles, files):
    """The test files (`files` first, then those of the checkout) that define the titles: the
    list of files, the ones among them that define a listed title first (a hidden patch also
    touches fixtures and helpers), and the titles none of them defines. A title may be a tuple
    of the titles one id can end in (own_title): found when a file defines any of them."""
    hits = []
    others = []
    groups = set(t if isinstance(t, tuple) else (t,) for t in titles)
    every = set(t for group in groups for t in group)
    missing = set(groups)
    for path in files + [p for p in walk_test_files(".") if p not in files]:
        if not missing and path not in files:
            break
        hit = defines(path, every)
        if hit:
            hits.append(path)
        elif path in files:
            others.append(path)
        missing = set(group for group in missing if not hit.intersection(group))
    return hits + others, set(group if len(group) > 1 else group[0] for group in missing)


def js_regex(text):
    return re.sub(r"([\\^$.*+?()[\]{}|/])", r"\\\1", text)


def ending_filter(names):
    """-t for a full name (titles joined by spaces) that ends in one of `names`, up to white
    space: SWE-bench's parsers strip each line, so a title that ends in a space is listed
    without it. [] when there is none, or the pattern would be too long to pass."""
    if not names:
        return []
    pattern = "(?:^| )(?:%s)\\s*$" % "|".join(js_regex(n) for n in names)
    return [] if len(pattern) > 100000 else ["-t", pattern]


def head_file(path):
    """`path`'s bytes at HEAD (None: not there, or no git)."""
    try:
        out = subprocess.run(["git", "show", "HEAD:./" + path], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def work_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def is_git():
    try:
        return subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def find_bin():
    """The framework's own program: the checkout's (node_modules/PACKAGE, from here up), else
    the one on PATH; run with node, so that its process is the one this runner started."""
    here = os.getcwd()
    while True:
        candidate = os.path.join(here, "node_modules", BIN_PATH)
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    found = shutil.which(FRAMEWORK)
    return os.path.realpath(found) if found else None


def package_version(program):
    """The version in the package.json above `program`, as a tuple of ints."""
    here = os.path.dirname(program)
    for _ in range(4):
        text = read_text(os.path.join(here, "package.json"))
        if text:
            try:
                return tuple(int(p) for p in re.findall(r"\d+", json.loads(text).get("version", ""))[:3])
            except (ValueError, AttributeError):
                return ()
        here = os.path.dirname(here)
    return ()


class Channel:
    """The reporter's way home: a socket in a private folder, one connection taken, from the
    framework's own process (its peer pid, from the kernel), then the socket is gone."""

    def __init__(self, scratch):
        import socket

        self.path = os.path.join(scratch, "reporter")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.server.settimeout(0.2)
        self.messages = []
        self.peer = None
        self.problems = []

    def serve(self, process):
        import socket
        import struct

        connection = None
        while connection is None:
            try:
                connection, _ = self.server.accept()
            except socket.timeout:
                if process.poll() is not None:
                    break
        self.server.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
        if connection is None:
            return
        connection.settimeout(None)
        creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        self.peer = struct.unpack("3i", creds)[0]
        if self.peer != process.pid:
            self.problems.append("the reporter's channel was taken by process %d, not %s's (%d)"
                                 % (self.peer, FRAMEWORK, process.pid))
            connection.close()
            return
        buffer = b""
        with connection:
            while True:
                chunk = connection.recv(1 << 20)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    try:
                        self.messages.append(json.loads(line.decode("utf-8", "replace")))
                    except ValueError:
                        self.problems.append("a malformed message from the reporter")
        if buffer:
            self.problems.append("the reporter's stream ended inside a message")


# A run of at most this many files (the sentinels' two and two of the project's) takes one test
# process, jest's worker or vitest's fork, never the framework's own: a second cost more CPU
# than it saved there (jest, two small files: 1.9 s against 3.1 s; vitest, four: 0.9 s against
# 1.8 s). Each runner's command says how it asks for one.
ONE_PROCESS_FILES = 4


def one_process(files):
    """Whether a run of `files` (None: the framework finds them) takes one test process."""
    return bool(files) and len(files) <= ONE_PROCESS_FILES


def run_framework(args, env, channel):
    """Runs the framework (node PROGRAM ARGS) with its reporter's messages going to `channel`;
    returns (exit code, the first 64 KiB of its stderr and stdout)."""
    import threading

    process = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    server = threading.Thread(target=channel.serve, args=(process,), daemon=True)
    server.start()
    head = []
    tee_stderr(process.stdout, head)
    code = process.wait()
    server.join(30)
    return code, b"".join(head).decode("utf-8", "replace")


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plan_files(ids, discover):
    """The test files to run, in order: hidden.patch's (those that exist), then those that
    define a listed title none of them does; None when a title is found nowhere (the
    framework then finds the test files itself, filtered by name)."""
    if discover:
        files = []
        for line in ids:
            for path in walk_test_files(os.path.normpath(line)):
                if path not in files:
                    files.append(path)
        return files
    patch = patch_test_files() or []
    found, missing = find_files(sorted(set(own_title(i) for i in ids)), patch)
    return None if missing else found


def default_first():
    """Where the sentinels go when the framework finds the test files itself: beside the
    checkout's first test file."""
    found = walk_test_files(".")
    return found[0] if found else os.path.join("__tests__", "x.test.js")


def refuse(ids, send, request, text):
    """Ends a run before the framework starts, with `text` as the cause: every listed test is an
    error (with sentinels, the session never begins, which the collector takes so). Returns 2."""
    send({"t": "cause", "text": text})
    if not (request and request.get("sentinels")):
        send({"t": "hello", "v": 2})
        discover = os.environ.get("PROCTOR_DISCOVER") == "1"
        for test_id in ([] if discover else with_canaries(ids, request)):
            send({"t": "outcome", "node": test_id, "when": "call", "ids": [test_id],
                  "status": "error", "sb": "ABSENT"})
        send({"t": "end"})
    return 2


def run_tests(ids, send, request=None):
    """Runs the listed tests (and the request's sentinels) with their outcomes going to
    `send`; returns the framework's exit code.

    With sentinels, the session begins (`hello`) only once the sentinels' file has run: when
    it cannot load (the candidate's code it imports does not parse), no test of the
    candidate's could say anything; the collector is told only why (`cause`), and every
    listed test is an error."""
    discover = os.environ.get("PROCTOR_DISCOVER") == "1"
    ids = with_canaries(ids, request)
    files = plan_files(ids, discover)
    sentinels = sentinel_plan(request) if request else []
    placed = []
    made = None  # a folder made for the sentinels, removed after
    scratch = tempfile.mkdtemp(prefix="proctor-%s-" % FRAMEWORK)
    try:
        if sentinels:
            first = files[0] if files else default_first()
            paths = sentinel_paths(first, request["file"])
            for path in paths:
                if os.path.lexists(path):
                    sys.stderr.write("proctor: %s exists; the sentinels cannot be placed\n" % path)
                    return 2
            sources = sentinel_sources(sentinels, first)
            folder = os.path.dirname(paths[0])
            if folder and not os.path.isdir(folder):
                os.makedirs(folder)
                made = folder
            for path, source in zip(paths, sources):
                with open(path, "x", encoding="utf-8") as f:
                    f.write(source)
                placed.append(path)
            if files is not None:
                files = [paths[0], paths[1]] + files
        program = find_bin()
        if program is None:
            return refuse(ids, send, request, "%s is not installed: no node_modules/%s here or above, none on PATH"
                          % (FRAMEWORK, BIN_PATH))
        config, written = config_args(request["file"] if request else "plain")
        placed.extend(written)
        channel = Channel(scratch)
        env = dict(os.environ)
        env[CHANNEL_ENV] = channel.path
        reporter = os.path.join(scratch, REPORTER_NAME)
        with open(reporter, "w", encoding="utf-8") as f:
            f.write(REPORTER_SOURCE)
        names = [] if discover else name_filter(ids, sentinels)
        # The runner's watch on the framework's expect (framework_watch, the dialect's).
        watch_args, watch = framework_watch(scratch, program, env)
        args = ["node"] + node_args(scratch) + [program] + command(files, names, reporter, scratch, config + watch_args, package_version(program))
        code, output = run_framework(args, env, channel)
        results = Results(ids, sentinels, placed[:2], discover, package_version(program))
        results.tampered.extend(framework_watch_alarms(watch))
        for message in channel.messages:
            results.feed(message)
        done = any(m.get("t") == "done" for m in channel.messages if isinstance(m, dict))
        messages = results.finish(done, channel.problems, output, code)
        if sentinels and not results.sentinels_ran():
            causes = [m for m in messages if m["t"] == "cause"] or [{"t": "cause", "text": (
                "%s did not run the sentinels' file %s (do the project's test patterns take it?):\n%s"
                % (FRAMEWORK, placed[0], ANSI.sub("", output[-3000:])))}]
            send(causes[0])
            return code or 1
        send({"t": "hello", "v": 2})
        for message in messages:
            send(message)
        send({"t": "end"})
        return code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for path in placed:
            try:
                os.unlink(path)
            except OSError:
                pass
        if made:
            try:
                os.removedirs(made)
            except OSError:
                pass


# ---- end of the JavaScript runners' part ---------------------------------------------------
