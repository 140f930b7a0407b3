# ---- canaries: mutants of the task's own tests (src/runners/core/canary.py in Proctor) ------
#
# The same bytes are in every built-in Python runner (Proctor writes this part into each when
# it writes the runner into a bundle); edit src/runners/core/canary.py, not a runner's copy.
#
# A canary is a copy of one of the task's tests with its expectation changed so that no
# honest code can pass it: a compared literal changed (`assert f(x) == 3` -> `== 7`,
# `assertEqual(a, "x")` -> `"xq"`), an expected exception swapped for a class made on the spot
# that nothing raises (`pytest.raises(E)`, `assertRaises(E)`, sympy's `raises(E, …)`), an
# assertion turned over (`assertTrue` -> `assertFalse`). The copy is placed right after its
# original, in the same file and class, under a name of the same shape (`test_x` ->
# `test_x_<word>`, the word drawn with a seed the oracle makes fresh for each grade). A canary
# that passes says the test cannot fail: its assertion, or what it calls, was made vacuous.
#
# `run --proctor-canary WORKTREE LIST SEED` places them. The oracle runs it as a trusted step
# (python3 -I, from outside the work tree, before any test process of the phase starts) and
# reads its one line of JSON on stdout: {"mutants": [{"id", "test", "mutation"}, …],
# "uncovered": [{"test", "why"}, …]}, and, for a dialect with INFILE_SENTINELS, "sentinels":
# [{"id", "test", "expect", "calls"}, …] and, when none could be placed, "sentinels_why" (the
# sentinels' part, below). Only the standard library is used, and only what
# Python 3.5 has: no ast.unparse, no end positions; the text of a node is found with the
# tokenizer and checked by parsing it again.
import ast as _ast
import bisect as _bisect
import io as _io
import json as _json
import random as _random
import tokenize as _tokenize

CANARY_WORDS = (
    "again", "alt", "basic", "case", "check", "edge", "extra", "more", "other", "simple",
    "variant", "values", "second", "repeat", "mixed", "plain", "small", "large", "default",
    "explicit", "twice", "single", "empty", "nested", "inline", "direct", "reverse", "strict",
)
CANARY_EQUAL = ("assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual",
                "assertDictEqual", "assertSetEqual", "assertSequenceEqual",
                "assertMultiLineEqual", "assertCountEqual")
# Not assertAlmostEqual: with a `delta` or few `places`, a changed number may honestly pass.
CANARY_FLIP = {"assertTrue": "assertFalse", "assertFalse": "assertTrue",
               "assertIsNone": "assertIsNotNone", "assertIsNotNone": "assertIsNone",
               "assertIn": "assertNotIn", "assertNotIn": "assertIn",
               "assertIsInstance": "assertNotIsInstance"}
CANARY_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")
CANARY_EXCEPTIONS = ("Mismatch", "Conflict", "Overflow", "Lookup", "Format", "State", "Range")
CANARY_MAX_FILE = 4 * 1024 * 1024


def _first_line(node):
    """A statement's first line: its first decorator's, where it has any."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


class _Source:
    """A file's text, its tokens by start position, and node positions in characters.

    The tokens are read lazily, a piece at a time. A piece starts where a statement of the
    module or of a class's body starts (at its first decorator), where the tokenizer's state
    is plain (no bracket open, no string), so its tokens are those a tokenization of the whole
    file has on its lines. A test file of thousands of lines is tokenized only around the
    listed tests, not whole (most of a canary step's time when it was)."""

    def __init__(self, text, tree):
        self.text = text
        self.lines = text.splitlines(True)
        starts = set([1])
        for node in tree.body:
            starts.add(_first_line(node))
            if isinstance(node, _ast.ClassDef):
                starts.update(_first_line(inner) for inner in node.body)
        self.starts = sorted(row for row in starts if 1 <= row <= len(self.lines))
        self.pieces = {}

    def tokens_at(self, start):
        """(the tokens of the piece holding `start`, the index of the first one starting
        there), or None when none starts there or the piece does not tokenize."""
        row = start[0]
        if row < 1 or row > len(self.lines):
            return None
        at = _bisect.bisect_right(self.starts, row) - 1
        piece = self.pieces.get(at)
        if piece is None:
            first = self.starts[at]
            last = self.starts[at + 1] - 1 if at + 1 < len(self.starts) else len(self.lines)
            text = "".join(self.lines[first - 1:last])
            tokens = []
            try:
                for token in _tokenize.generate_tokens(_io.StringIO(text).readline):
                    tokens.append((token[0], token[1], (token[2][0] + first - 1, token[2][1]),
                                   (token[3][0] + first - 1, token[3][1])))
            except (_tokenize.TokenError, IndentationError, SyntaxError):
                tokens = []
            index = {}
            for number, token in enumerate(tokens):
                index.setdefault(token[2], number)
            piece = self.pieces[at] = (tokens, index)
        tokens, index = piece
        found = index.get(start)
        return None if found is None else (tokens, found)

    def start(self, node):
        """(row, column in characters) of a node: col_offset counts UTF-8 bytes."""
        row = node.lineno
        if node.col_offset < 0 or row < 1 or row > len(self.lines):
            return None
        raw = self.lines[row - 1].encode("utf-8")[:node.col_offset]
        return row, len(raw.decode("utf-8", "replace"))

    def segment(self, start, end):
        (r1, c1), (r2, c2) = start, end
        if r1 == r2:
            return self.lines[r1 - 1][c1:c2]
        return "".join([self.lines[r1 - 1][c1:]] + self.lines[r1:r2 - 1] + [self.lines[r2 - 1][:c2]])

    def extent(self, node):
        """(start, end) of a literal, a name, a dotted name or a bracketed display, verified
        by parsing its text back into the same tree; None when it cannot be told."""
        start = self.start(node)
        found = self.tokens_at(start) if start else None
        if found is None:
            return None
        tokens, index = found
        first = tokens[index]
        end = None
        if first[0] == _tokenize.STRING:
            i = index
            while i < len(tokens) and tokens[i][0] in (
                    _tokenize.STRING, _tokenize.NL, _tokenize.COMMENT):
                if tokens[i][0] == _tokenize.STRING:
                    end = tokens[i][3]
                i += 1
        elif first[0] == _tokenize.NUMBER:
            end = first[3]
        elif first[0] == _tokenize.NAME:
            end = first[3]
            i = index + 1
            while (i + 1 < len(tokens) and tokens[i][1] == "."
                   and tokens[i + 1][0] == _tokenize.NAME):
                end = tokens[i + 1][3]
                i += 2
        elif first[1] in ("(", "[", "{"):
            depth = 0
            for token in tokens[index:]:
                if token[0] == _tokenize.OP and token[1] in ("(", "[", "{"):
                    depth += 1
                elif token[0] == _tokenize.OP and token[1] in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        end = token[3]
                        break
        if end is None:
            return None
        text = self.segment(start, end)
        try:
            again = _ast.parse("(\n" + text + "\n)", mode="eval").body
        except SyntaxError:
            return None
        if _ast.dump(again) != _ast.dump(node):
            return None
        return start, end

    def name_after(self, node, word):
        """(start, end) of the first NAME token `word` at or after a node's start."""
        start = self.start(node)
        found = self.tokens_at(start) if start else None
        if found is None:
            return None
        tokens, index = found
        for token in tokens[index:index + 200]:
            if token[0] == _tokenize.NAME and token[1] == word:
                return token[2], token[3]
        return None


def _literal(node):
    """(kind, value) of a literal the mutator can change, else None."""
    if isinstance(node, (_ast.List, _ast.Tuple, _ast.Set, _ast.Dict)):
        return "container", type(node).__name__
    value = getattr(node, "value", None) if type(node).__name__ in ("Constant", "NameConstant") else None
    if type(node).__name__ == "Num":
        value = node.n
    elif type(node).__name__ in ("Str", "Bytes"):
        value = node.s
    elif type(node).__name__ not in ("Constant", "NameConstant"):
        return None
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, (int, float, str, bytes)):
        return "value", value
    return None


def _changed(kind, value, text, rng):
    """New source text for a literal: a value no honest result equals if the old one does."""
    if kind == "bool":
        return repr(not value)
    if kind == "container":
        tail = {"List": " + [None]", "Tuple": " + (None,)", "Set": " | {None}"}.get(value)
        if tail is None:
            return "dict(%s, **{%r: None})" % (text, rng.choice(CANARY_WORDS))
        return "(%s%s)" % (text, tail)
    if isinstance(value, (int, float)):
        return repr(value + rng.randint(1, 9))
    letter = rng.choice("abcdefghkmnpqrstuvwxyz")
    return repr(value + (letter.encode("ascii") if isinstance(value, bytes) else letter))


def _is_with(statement):
    return isinstance(statement, _ast.With) or type(statement).__name__ == "AsyncWith"


def _direct_statements(body):
    """Statements that run whenever the test does: the body's, and those of its `with`
    blocks (not inside a branch, a loop, a try or a nested function, where an assertion may
    honestly never run)."""
    for statement, _ in _direct_with_tails(body):
        yield statement


def _local_target(target):
    """A target that only binds local names: `x`, `a, b`, `*rest`."""
    if isinstance(target, _ast.Name):
        return True
    if isinstance(target, (_ast.Tuple, _ast.List)):
        return all(_local_target(t) for t in target.elts)
    if type(target).__name__ == "Starred":
        return _local_target(target.value)
    return False


def _is_check(statement):
    """A statement that leaves no state behind it but the test's own names: `assert …`,
    `pass`, a docstring, an assertion call (`self.assertX(…)`, `raises(E, …)`), a `with` of
    `raises(E)`/`assertRaises(E)` alone, an assignment to local names (`x = Symbol('x')`), an
    import, or an `if`, `for`, `while` or `try` of such statements. Not a call made for its effect
    (`seterr(divide=False)`, `patcher.stop()`), nor an assignment to an attribute or an item."""
    if isinstance(statement, (_ast.Assert, _ast.Pass, _ast.Import, _ast.ImportFrom)):
        return True
    if isinstance(statement, _ast.Expr):
        value = statement.value
        if isinstance(value, _ast.Call):
            name = _callee(value)
            return name is not None and (name.startswith("assert") or name in CANARY_RAISES)
        literal = _literal(value)
        return literal is not None and isinstance(literal[1], str)
    if isinstance(statement, _ast.Assign):
        return all(_local_target(t) for t in statement.targets)
    if type(statement).__name__ in ("AugAssign", "AnnAssign"):
        return _local_target(statement.target)
    if _is_with(statement):
        items = getattr(statement, "items", None) or []
        return bool(items) and all(isinstance(i.context_expr, _ast.Call)
                                   and _callee(i.context_expr) in CANARY_RAISES for i in items)
    if isinstance(statement, (_ast.If, _ast.While)) or (
            isinstance(statement, _ast.For) and _local_target(statement.target)):
        return all(_is_check(s) for s in statement.body + statement.orelse)
    if type(statement).__name__ in ("Try", "TryStar", "TryExcept", "TryFinally"):
        parts = list(statement.body) + list(getattr(statement, "orelse", []))
        parts += list(getattr(statement, "finalbody", []))
        for handler in getattr(statement, "handlers", []):
            parts += list(handler.body)
        return all(_is_check(s) for s in parts)
    return False


def _direct_with_tails(body, rest_checks=True):
    """The direct statements (_direct_statements), each with whether everything the test would
    still run after it, in its body and after the `with` blocks around it, only checks: a
    mutant fails at its changed assertion and skips the rest of its test, so an assertion
    followed by code that puts state back (`seterr(divide=False)`, a global reset) would leave
    that state to the tests after it, and fail tests that are not its own."""
    after = [rest_checks] * len(body)
    checks = rest_checks
    for i in range(len(body) - 1, -1, -1):
        after[i] = checks
        checks = checks and _is_check(body[i])
    for statement, rest in zip(body, after):
        yield statement, rest
        if _is_with(statement):
            for inner in _direct_with_tails(statement.body, rest):
                yield inner


def _calls(statement):
    """The calls a direct statement makes at its top: `x(…)`, `with x(…):`, `a = x(…)`."""
    if isinstance(statement, _ast.Expr) and isinstance(statement.value, _ast.Call):
        return [statement.value]
    if _is_with(statement):
        items = getattr(statement, "items", None) or []
        return [i.context_expr for i in items if isinstance(i.context_expr, _ast.Call)]
    if isinstance(statement, _ast.Assign) and isinstance(statement.value, _ast.Call):
        return [statement.value]
    return []


def _callee(call):
    func = call.func
    if isinstance(func, _ast.Attribute):
        return func.attr
    if isinstance(func, _ast.Name):
        return func.id
    return None


def _mutations(source, function, rng):
    """Every mutation the mutator understands in a test function whose test runs nothing but
    checks after it (_direct_with_tails): (edits, description), an edit being (start, end, new
    text); and those left out for the code after them."""
    found = []
    skipped = []
    for statement, rest_checks in _direct_with_tails(function.body):
        (found if rest_checks else skipped).extend(_mutations_of(source, statement, rng))
    return found, skipped


def _mutations_of(source, statement, rng):
    """The mutations the mutator understands in one direct statement of a test."""
    found = []
    if isinstance(statement, _ast.Assert) and isinstance(statement.test, _ast.Compare):
        test = statement.test
        if len(test.ops) == 1 and isinstance(test.ops[0], (_ast.Eq, _ast.Is)):
            for side in (test.comparators[0], test.left):
                target = side.operand if (isinstance(side, _ast.UnaryOp)
                                          and isinstance(side.op, _ast.USub)) else side
                lit = _literal(target)
                if lit is None or (isinstance(test.ops[0], _ast.Is) and lit[0] != "bool"):
                    continue
                span = source.extent(target)
                if span is not None:
                    text = _changed(lit[0], lit[1], source.segment(*span), rng)
                    found.append(([(span[0], span[1], text)], "expected value %s -> %s" % (
                        source.segment(*span), text)))
                    break
    for call in _calls(statement):
        name = _callee(call)
        if name in CANARY_EQUAL and len(call.args) >= 2:
            for arg in (call.args[1], call.args[0]):
                target = arg.operand if (isinstance(arg, _ast.UnaryOp)
                                         and isinstance(arg.op, _ast.USub)) else arg
                lit = _literal(target)
                span = source.extent(target) if lit is not None else None
                if span is not None:
                    text = _changed(lit[0], lit[1], source.segment(*span), rng)
                    found.append(([(span[0], span[1], text)], "%s expected %s -> %s" % (
                        name, source.segment(*span), text)))
                    break
        elif name in CANARY_FLIP and isinstance(call.func, _ast.Attribute):
            span = source.name_after(call.func, name)
            if span is not None:
                found.append(([(span[0], span[1], CANARY_FLIP[name])],
                              "%s -> %s" % (name, CANARY_FLIP[name])))
        elif name in CANARY_RAISES and call.args:
            span = source.extent(call.args[0])
            if span is not None:
                fresh = "%sError" % rng.choice(CANARY_EXCEPTIONS)
                text = "type(%r, (Exception,), {})" % fresh
                found.append(([(span[0], span[1], text)], "%s(%s) -> a new %s nothing raises" % (
                    name, source.segment(*span), fresh)))
    return found


def _span(source, node, following, limit):
    """(first, last) line of a definition: from its first decorator to the line before what
    follows it (`following`: the next statement's node, or None, then `limit`), without the
    blank and comment lines at its end."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    if following is not None:
        last = min([following.lineno] + [d.lineno for d in getattr(following, "decorator_list", [])]) - 1
    else:
        last = limit
    while last > first and (source.lines[last - 1].strip() == ""
                            or source.lines[last - 1].lstrip().startswith("#")):
        last -= 1
    return first, last


def _definitions(source, tree):
    """{(class or None, name): (node, first line, last line)} of a module's test functions
    and its classes' test methods."""
    found = {}
    body = tree.body
    for index, node in enumerate(body):
        following = body[index + 1] if index + 1 < len(body) else None
        if isinstance(node, (_ast.FunctionDef, getattr(_ast, "AsyncFunctionDef", _ast.FunctionDef))):
            found[(None, node.name)] = (node,) + _span(source, node, following, len(source.lines))
        elif isinstance(node, _ast.ClassDef):
            end = _span(source, node, following, len(source.lines))[1]
            for inner_index, inner in enumerate(node.body):
                if isinstance(inner, _ast.FunctionDef):
                    after = node.body[inner_index + 1] if inner_index + 1 < len(node.body) else None
                    found[(node.name, inner.name)] = (inner,) + _span(source, inner, after, end)
    return found


# The fields that hold statements: a definition is only ever among them, never in an expression.
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _names(tree):
    """The names of every function and class a module defines, at any depth."""
    names = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (_ast.FunctionDef, _ast.ClassDef)):
            names.add(node.name)
        for field in _STATEMENT_FIELDS:
            children = getattr(node, field, None)
            if isinstance(children, list):
                pending.extend(children)
    return names


def canary_file(text, targets, rng, per_test=1, taken_extra=()):
    """Mutants of the test functions `targets` ((class or None, name), …) of one file's text,
    named as none of its own names nor `taken_extra` are.
    Returns (new text, [(target, mutant name, mutation)], [(target, why)])."""
    try:
        tree = _ast.parse(text)
        source = _Source(text, tree)
    except (SyntaxError, ValueError, _tokenize.TokenError, IndentationError) as error:
        why = "the file does not parse on this Python (%s)" % type(error).__name__
        return text, [], [(t, why) for t in targets]
    definitions = _definitions(source, tree)
    taken = _names(tree) | set(taken_extra)
    inserts = []  # (after line, text)
    made = []
    uncovered = []
    for target in targets:
        entry = definitions.get(target)
        if entry is None:
            uncovered.append((target, "no such test function in the file"))
            continue
        node, first, last = entry
        choices, skipped = _mutations(source, node, rng)
        if not choices:
            uncovered.append((target, "no assertion the mutator understands" if not skipped else
                              "its assertions are followed by code a failing copy would skip"))
            continue
        rng.shuffle(choices)
        for edits, description in choices[:per_test]:
            name = None
            for word in rng.sample(CANARY_WORDS, len(CANARY_WORDS)):
                if node.name + "_" + word not in taken:
                    name = node.name + "_" + word
                    break
            if name is None:
                uncovered.append((target, "no free name for a mutant"))
                break
            taken.add(name)
            span = source.name_after(node, node.name)
            lines = list(source.lines)
            for (r1, c1), (r2, c2), new in sorted(edits + [(span[0], span[1], name)], reverse=True):
                head = lines[r1 - 1][:c1]
                tail = lines[r2 - 1][c2:]
                lines[r1 - 1:r2] = [head + new + tail] + [""] * (r2 - r1)
            copy = "".join(lines[first - 1:last])
            if not copy.endswith("\n"):
                copy += "\n"
            # The blank lines the file's own style puts between definitions (PEP 8's).
            inserts.append((last, ("\n\n" if target[0] is None else "\n") + copy))
            made.append((target, name, description))
    out = list(source.lines)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    for after, copy in sorted(inserts, key=lambda item: item[0], reverse=True):
        out[after:after] = [copy]
    return "".join(out), made, uncovered


def canary_place(worktree, placements, seed, per_test=1, taken=()):
    """Places the mutants in the files of the work tree. `placements`: {path: [(target,
    [listed id, …]), …]} from the runner's dialect (its canary_targets). Returns the JSON-ready {"mutants": …, "uncovered": …}."""
    import os

    rng = _random.Random(seed)
    mutants = []
    uncovered = []
    for path in sorted(placements):
        entries = placements[path]
        full = os.path.join(worktree, path)
        why = None
        if os.path.islink(full) or not os.path.isfile(full):
            why = "the file is not a regular file in the work tree"
        elif os.path.getsize(full) > CANARY_MAX_FILE:
            why = "the file is over %d bytes" % CANARY_MAX_FILE
        text = None
        if why is None:
            try:
                with open(full, encoding="utf-8", newline="") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                why = "the file cannot be read as UTF-8"
        if why is not None:
            for _, ids in entries:
                uncovered.extend({"test": i, "why": why} for i in ids)
            continue
        by_target = dict(entries)
        # A dialect whose tests are not Python's gives its own mutator (canary_mutate_file).
        mutate = globals().get("canary_mutate_file", canary_file)
        new, made, missed = mutate(text, [t for t, _ in entries], rng, per_test, taken)
        taken = set(taken) | set(entry[1] for entry in made)
        for target, why in missed:
            uncovered.extend({"test": i, "why": why} for i in by_target[target])
        if not made:
            continue
        mode = os.stat(full).st_mode & 0o7777
        tmp = full + ".proctor-canary"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(new)
        os.chmod(tmp, mode)
        os.replace(tmp, full)
        # A dialect whose ids name a test otherwise gives its own canary_id (or, where the
        # target says more than its name, canary_target_id).
        mutant_id = globals().get("canary_id", canary_mutant_id)
        target_id = globals().get("canary_target_id")
        for entry in made:
            target, name, mutation = entry[:3]
            # A dialect's mutator may leave some of a target's listed ids out of its mutant,
            # each with why (Go's: a listed subtest with no check of its own turned over).
            left = entry[3] if len(entry) > 3 else {}
            for listed in by_target[target]:
                if listed in left:
                    uncovered.append({"test": listed, "why": left[listed]})
                    continue
                made_id = target_id(listed, target, name) if target_id else mutant_id(listed, target[1], name)
                mutants.append({"id": made_id, "test": listed, "mutation": mutation})
    # A listed id that stands for several targets (a JUnit class listed whole) is covered when
    # any of them got a mutant, and named uncovered once, with its targets' reasons.
    covered = set(m["test"] for m in mutants)
    whys = {}
    for entry in uncovered:
        if entry["test"] not in covered and entry["why"] not in whys.setdefault(entry["test"], []):
            whys[entry["test"]].append(entry["why"])
    uncovered = [{"test": test, "why": ("; ".join(reasons[:3]) + ("; …" if len(reasons) > 3 else ""))[:1000]}
                 for test, reasons in whys.items()]
    return {"mutants": mutants, "uncovered": uncovered}


# ---- sentinels in the hidden test files ------------------------------------------------------
#
# Beside the mutants, the trusted step writes two sentinels into the listed tests' own files
# (when the dialect says it wants them: INFILE_SENTINELS): one that must pass and one that must
# fail, each placed right after a listed test, in its class, named as a canary is
# (`test_x_<word>`), and committed with the file, so that nothing aimed by file (git-tracked,
# the hidden files), by name or by position can spare them. Where a listed test calls the code
# under test with arguments the sentinel can give too (module-level names, literals, `self`),
# both sentinels make that call: a forgery that disarms the tests that call the code disarms
# them as well. The must-pass one passes whatever the call does (it keeps the result, or the
# exception, and checks that it is itself); the must-fail one asserts that the result is not
# itself, which cannot hold. A must-pass sentinel is judged only when the test it sits after
# passed (a broken setUp or fixture fails both honestly). A call the test asserts on is
# preferred to one it makes for its effect. The dialects that want them: pytest (a function
# or a method of the test's class), django (a method of the listed test's TestCase class, its
# id in the listed test's form) and sympy (a module-level function, its id its bare name:
# the dialect's canary_taken keeps it, and a mutant, from another file's test name); go writes
# its own (sentinel_mutate_file: a top-level test function before the listed one, since a
# panic after it ends go's binary). Where a
# dialect has sentinel_files, they go only into the files the hidden run takes.
SENTINEL_NAMES = ("value", "result", "actual", "outcome", "got", "answer", "returned")
SENTINEL_SKIP_CALLS = ("raises", "warns", "approx", "fail", "skip", "xfail", "deprecated_call",
                       "isinstance", "len", "type", "print", "lambda")
SENTINEL_SKIP_ROOTS = ("pytest", "unittest", "mock")
SENTINEL_MAX_FILES = 3


def _call_extent(source, call):
    """(start, end) of a call's text, checked by parsing it back into the same tree."""
    start = source.start(call)
    found = source.tokens_at(start) if start else None
    if found is None:
        return None
    tokens, index = found
    depth = 0
    target = _ast.dump(call)
    for token in tokens[index:index + 4000]:
        if token[0] == _tokenize.OP and token[1] in ("(", "[", "{"):
            depth += 1
        elif token[0] == _tokenize.OP and token[1] in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                text = source.segment(start, token[3])
                try:
                    again = _ast.parse("(\n" + text + "\n)", mode="eval").body
                except SyntaxError:
                    continue
                if _ast.dump(again) == target:
                    return start, token[3]
        elif depth == 0 and token[0] in (_tokenize.NEWLINE, _tokenize.ENDMARKER):
            return None
    return None


def _module_names(tree):
    """The names a module binds at its top (imports, definitions, assignments)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (_ast.Import, _ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (_ast.FunctionDef, _ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, _ast.Assign):
            # `x = …` and `x, y = symbols("x y")` (sympy's test files bind their symbols so).
            for target in node.targets:
                bound = target.elts if isinstance(target, (_ast.Tuple, _ast.List)) else [target]
                names.update(n.id for n in bound if isinstance(n, _ast.Name))
    return names


def _imported(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (_ast.Import, _ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def _root(node):
    while isinstance(node, (_ast.Attribute, _ast.Call, _ast.Subscript)):
        node = node.func if isinstance(node, _ast.Call) else node.value
    return node.id if isinstance(node, _ast.Name) else None


def _local_names(function):
    """The names a test function binds: its parameters, what it assigns, imports or defines."""
    args = function.args
    names = set(a.arg for a in (getattr(args, "posonlyargs", []) + args.args
                                + getattr(args, "kwonlyargs", [])))
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    for node in _ast.walk(function):
        if isinstance(node, _ast.Name) and isinstance(node.ctx, (_ast.Store, _ast.Del)):
            names.add(node.id)
        elif isinstance(node, (_ast.Import, _ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (_ast.FunctionDef, _ast.ClassDef)) and node is not function:
            names.add(node.name)
        elif isinstance(node, _ast.ExceptHandler) and isinstance(node.name, str):
            names.add(node.name)
    return names


def _asserted(statement):
    """The ids of the nodes whose value a statement asserts on: inside an `assert`, or among
    the arguments of an `assert*` call (`self.assertEqual(f(x), 3)`)."""
    inside = set()
    for node in _ast.walk(statement):
        if isinstance(node, _ast.Assert):
            roots = [node.test]
        elif isinstance(node, _ast.Call) and (_callee(node) or "").startswith("assert"):
            roots = list(node.args) + [k.value for k in node.keywords]
        else:
            continue
        for root in roots:
            inside.update(id(n) for n in _ast.walk(root))
    return inside


def sentinel_call(source, tree, function, in_class):
    """The text of a call a test function makes to the code it imports that a sentinel can
    make too: every name in it bound at the module's top or a builtin (`self` in a method),
    no lambda or comprehension; None when there is none. A call whose result the test asserts
    on comes first: one made for its effect (a setting switched, a file removed) could, made
    again, change what the tests after it see."""
    import builtins

    module = _module_names(tree)
    imported = _imported(tree)
    # A name the test binds itself (`x = Symbol("x", positive=True)` over the module's `x`) is
    # not the module's in its calls: a sentinel's call with the module's would be another call.
    allowed = (module | set(dir(builtins))) - _local_names(function)
    if in_class:
        allowed.add("self")
    later = None
    for statement in _direct_statements(function.body):
        if isinstance(statement, (_ast.FunctionDef, _ast.ClassDef)):
            continue
        asserted = _asserted(statement)
        for node in _ast.walk(statement):
            if not isinstance(node, _ast.Call):
                continue
            name = _callee(node)
            root = _root(node.func)
            if name is None or name in SENTINEL_SKIP_CALLS or name.startswith("assert"):
                continue
            if root is None or root in SENTINEL_SKIP_ROOTS or (
                    root != "self" and root not in imported):
                continue
            inner = list(_ast.walk(node))
            if any(type(n).__name__ in ("Lambda", "ListComp", "SetComp", "DictComp",
                                        "GeneratorExp", "Await", "Yield", "YieldFrom",
                                        "NamedExpr", "Starred")
                   for n in inner):
                continue
            if not all(n.id in allowed for n in inner if isinstance(n, _ast.Name)):
                continue
            if root == "self" and isinstance(node.func, _ast.Attribute) and isinstance(
                    node.func.value, _ast.Name):
                continue  # a method of the test case itself (a helper of the tests)
            span = _call_extent(source, node)
            if span is None:
                continue
            if id(node) in asserted:
                return source.segment(*span)
            if later is None:
                later = source.segment(*span)
    return later


def sentinel_text(def_indent, body_indent, name, method, call, expect, local, number):
    """A sentinel's definition, in the file's own indentation."""
    unit = body_indent[len(def_indent):] or "    "
    lines = ["%sdef %s(%s):" % (def_indent, name, method or "")]
    local, caught = local or (None, None)
    if call is None:
        if expect == "passed":
            lines.append("%sassert %d + 1 == %d" % (body_indent, number, number + 1))
        else:
            lines.append("%sassert %d == %d" % (body_indent, number, number + 1))
    else:
        lines += [
            "%stry:" % body_indent,
            "%s%s%s = %s" % (body_indent, unit, local, call),
            "%sexcept Exception as %s:" % (body_indent, caught),
            "%s%s%s = %s" % (body_indent, unit, local, caught),
            "%sassert %s %s %s" % (body_indent, local, "is" if expect == "passed" else "is not", local),
        ]
    return "\n".join(lines) + "\n"


class _NameWords:
    """`word in` it: whether a module uses `word` as a name. A word its text does not hold
    is none; the tree is walked, once, only for a word it does hold."""

    def __init__(self, text, tree):
        self.text = text
        self.tree = tree
        self.names = None

    def __contains__(self, word):
        if word not in self.text:
            return False
        if self.names is None:
            self.names = set(n.id for n in _ast.walk(self.tree) if isinstance(n, _ast.Name))
        return word in self.names


def sentinel_file(text, targets, rng, taken_extra=()):
    """A must-pass and a must-fail sentinel placed after listed tests of one file's text:
    (new text, [(target, name, expect, calls)], why none) ."""
    try:
        tree = _ast.parse(text)
        source = _Source(text, tree)
    except (SyntaxError, ValueError, _tokenize.TokenError, IndentationError) as error:
        return text, [], "the file does not parse on this Python (%s)" % type(error).__name__
    definitions = _definitions(source, tree)
    taken = _names(tree) | set(taken_extra)
    words = _NameWords(text, tree)
    local = next((n for n in rng.sample(SENTINEL_NAMES, len(SENTINEL_NAMES)) if n not in words), None)
    caught = next((n for n in ("error", "exc", "problem", "failure") if n not in words), None)
    local = (local, caught) if local and caught else None
    usable = []
    for target in targets:
        entry = definitions.get(target)
        if entry is None or type(entry[0]).__name__ != "FunctionDef":
            continue
        node = entry[0]
        if target[0] is not None and not node.args.args:
            continue
        usable.append((target, entry))
    if not usable:
        return text, [], "no listed test function of the file to place them after"
    called = []
    for target, entry in usable:
        call = sentinel_call(source, tree, entry[0], target[0] is not None) if local else None
        if call is not None:
            called.append((target, entry, call))
    inserts = []
    made = []
    for number, expect in enumerate(rng.sample(["passed", "failed"], 2)):
        if called:
            target, entry, call = rng.choice(called)
        else:
            (target, entry), call = rng.choice(usable), None
        node, first, last = entry
        name = None
        for word in rng.sample(CANARY_WORDS, len(CANARY_WORDS)):
            if node.name + "_" + word not in taken:
                name = node.name + "_" + word
                break
        if name is None:
            continue
        taken.add(name)
        def_line = source.lines[node.lineno - 1]
        def_indent = def_line[:len(def_line) - len(def_line.lstrip())]
        body_line = source.lines[node.body[0].lineno - 1]
        body_indent = body_line[:len(body_line) - len(body_line.lstrip())]
        if node.body[0].lineno == node.lineno or len(body_indent) <= len(def_indent):
            body_indent = def_indent + "    "
        method = node.args.args[0].arg if target[0] is not None else None
        block = sentinel_text(def_indent, body_indent, name, method, call, expect, local,
                              rng.randint(2, 97))
        inserts.append((last, ("\n\n" if target[0] is None else "\n") + block))
        made.append((target, name, expect, call))
    out = list(source.lines)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    for after, block in sorted(inserts, key=lambda item: item[0], reverse=True):
        out[after:after] = [block]
    return "".join(out), made, None


def sentinel_pair(text, usable, rng, free_name, block):
    """What the dialects' own sentinel writers (sentinel_mutate_file) share: a must-pass and a
    must-fail sentinel, in an order drawn from `rng`, each beside a target drawn from `usable`
    ([(target, what the dialect found of it)]), named by the first canary word, in a random
    order, for which `free_name(target, word)` gives a name (None: taken; it records the name
    it gives), comparing two numbers of its own, equal for the one that must pass.
    `block(target, found, name, got, want)` gives (offset, text, id or None) of its text.
    Returns (new text, [(target, name, expect, None[, id])], why none)."""
    inserts = []
    made = []
    for expect in rng.sample(["passed", "failed"], 2):
        target, found = rng.choice(usable)
        name = None
        for word in rng.sample(CANARY_WORDS, len(CANARY_WORDS)):
            name = free_name(target, word)
            if name is not None:
                break
        if name is None:
            continue
        got = rng.randint(2, 97)
        at, piece, ident = block(target, found, name, got, got if expect == "passed" else got + 1)
        inserts.append((at, len(inserts), piece))
        made.append((target, name, expect, None) + (() if ident is None else (ident,)))
    new = text
    for at, _, piece in sorted(inserts, reverse=True):
        new = new[:at] + piece + new[at:]
    return new, made, None if made else "no free name"


def sentinel_free_name(taken, name_of):
    """sentinel_pair's free_name for names `name_of(target, word)` not in the set `taken`."""
    def free(target, word):
        name = name_of(target, word)
        if name in taken:
            return None
        taken.add(name)
        return name
    return free


def sentinel_id(listed, name, sentinel):
    """The sentinel's id: the listed id of the test it follows with the name made the
    sentinel's, and no parameter (a sentinel is not parametrized)."""
    made = globals().get("canary_id", canary_mutant_id)(listed, name, sentinel)
    at = made.rfind(sentinel)
    if at >= 0 and made[at + len(sentinel):].startswith("["):
        made = made[:at + len(sentinel)]
    return made


def sentinel_place(worktree, placements, rng, taken=()):
    """Places the in-file sentinels (up to SENTINEL_MAX_FILES files of `placements`): the
    JSON-ready ([{"id", "test", "expect", "calls"}, …], why none when there are none).
    `taken`: names no sentinel may have beside those of its own file (a dialect whose ids are
    bare function names gives every test name of its run's files)."""
    import os

    paths = sorted(placements)
    rng.shuffle(paths)
    placed = []
    whys = []
    for path in paths[:SENTINEL_MAX_FILES]:
        entries = placements[path]
        full = os.path.join(worktree, path)
        if os.path.islink(full) or not os.path.isfile(full) or os.path.getsize(full) > CANARY_MAX_FILE:
            whys.append("%s: not a regular file under %d bytes" % (path, CANARY_MAX_FILE))
            continue
        try:
            with open(full, encoding="utf-8", newline="") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            whys.append("%s: cannot be read as UTF-8" % path)
            continue
        by_target = dict(entries)
        # A dialect whose tests are not Python's writes its own (sentinel_mutate_file), and
        # may give each sentinel's id (a fifth element).
        write = globals().get("sentinel_mutate_file", sentinel_file)
        new, made, why = write(text, [t for t, _ in entries], rng, taken)
        if not made:
            whys.append("%s: %s" % (path, why or "no free name"))
            continue
        mode = os.stat(full).st_mode & 0o7777
        tmp = full + ".proctor-canary"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(new)
        os.chmod(tmp, mode)
        os.replace(tmp, full)
        taken = set(taken) | set(entry[1] for entry in made)
        for entry in made:
            target, name, expect, call = entry[:4]
            listed = by_target[target][0]
            target_id = globals().get("canary_target_id")
            ident = entry[4] if len(entry) > 4 else \
                target_id(listed, target, name) if target_id else sentinel_id(listed, target[1], name)
            placed.append({"id": ident, "test": listed, "expect": expect, "calls": call or ""})
    if not placements:
        whys.append("no listed test is in a file the runner parsed")
    return placed, ("; ".join(whys) if not placed else None)


def canary_hidden_ids(list_file):
    """The hidden tests' ids: those of the LIST's first PROCTOR_CANARY_HIDDEN_BYTES bytes (the
    oracle puts a sample of the existing tests after them); None, all of them, without it."""
    import os

    count = os.environ.get("PROCTOR_CANARY_HIDDEN_BYTES", "")
    if not count.isdigit():
        return None
    with open(list_file, "rb") as f:
        head = f.read(int(count)).decode("utf-8", "replace")
    lines = [line[:-1] if line.endswith("\r") else line for line in head.split("\n")]
    return set(line for line in lines if line.strip() != "")


def canary_mutant_id(listed, name, mutant):
    """A listed id with its test function's name (its last occurrence) made the mutant's."""
    at = listed.rfind(name)
    return listed if at < 0 else listed[:at] + mutant + listed[at + len(name):]


def with_canaries(ids, request):
    """The test side's ids: the listed ids and those of the canaries the trusted step placed
    (the request's `canaries`): the copies run, and are reported, as listed tests."""
    canaries = (request or {}).get("canaries", [])
    if not isinstance(canaries, list) or not all(
            isinstance(c, str) and "\n" not in c and "\r" not in c for c in canaries):
        raise ValueError("bad canary ids")
    listed = set(ids)
    return ids + [c for c in canaries if c not in listed]


# The hidden tests' ids while the canary step runs (canary_hidden_ids; None: every listed id),
# for a dialect's canary_targets that treats the sampled existing tests apart.
CANARY_HIDDEN = None


def main_canary(argv):
    """`run --proctor-canary WORKTREE LIST SEED`: see the top of this part."""
    global CANARY_HIDDEN
    worktree, list_file, seed = argv
    ids = read_ids(list_file)
    hidden = CANARY_HIDDEN = canary_hidden_ids(list_file)
    # The runner's dialect says where its listed tests are defined; one without says so.
    targets = globals().get("canary_targets")
    if targets is None:
        placements, unplaced = {}, [(i, "this runner places no canaries") for i in ids]
    else:
        placements, unplaced = targets(worktree, ids)
    # A dialect whose ids do not name the file (sympy's bare names) says which names its run's
    # files take (canary_taken): no mutant or sentinel is named as another file's test.
    names_taken = globals().get("canary_taken", lambda w, p: ())
    result = canary_place(worktree, placements, seed, taken=names_taken(worktree, placements))
    result["uncovered"] = [{"test": i, "why": w} for i, w in unplaced] + result["uncovered"]
    if globals().get("INFILE_SENTINELS"):
        # After the mutants, in the files as they now are (a name a mutant took stays taken).
        taken = names_taken(worktree, placements)
        # A dialect whose hidden run takes only some of the files (the hidden patch's, not a
        # sampled existing test's) says which (sentinel_files): a sentinel elsewhere would not
        # run, and would vouch for nothing.
        runs = globals().get("sentinel_files")
        in_run = placements if runs is None else dict(
            (path, entries) for path, entries in placements.items()
            if path in runs(worktree, placements))
        # Only after a hidden test: the hidden run reports it (a sampled existing test it may
        # not), and a must-pass sentinel is judged by the test it follows.
        chosen = {}
        for path, entries in in_run.items():
            kept = [(target, [i for i in listed if hidden is None or i in hidden])
                    for target, listed in entries]
            kept = [(target, listed) for target, listed in kept if listed]
            if kept:
                chosen[path] = kept
        sentinels, why = sentinel_place(worktree, chosen, _random.Random(seed + "-sentinels"),
                                        taken)
        if placements and not in_run:
            why = "no listed test is in a test file of the hidden patch"
        elif in_run and not chosen:
            why = "no hidden test is in a file the runner parsed (only sampled existing ones)"
        result["sentinels"] = sentinels
        if why is not None:
            result["sentinels_why"] = why
    sys.stdout.write(_json.dumps(result, ensure_ascii=True) + "\n")
    return 0
# ---- end of canaries ------------------------------------------------------------------------
