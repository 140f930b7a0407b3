# The mutation step of `proctor impossible` (src/impossible/probe.ts runs it in a container of
# the task's image, with the image's python3): `mutate.py RUNNER WORKTREE LIST SEED MODE`.
#
# It writes no mutator of its own: it loads the task's runner as a module (a built-in Python
# runner carries src/runners/core/canary.py, the canaries' mutator, and its dialect's
# canary_targets) and uses that code to change one hidden test so that it contradicts the
# task: `one-off` changes the test in place (a compared literal, an expected exception, an
# assertion turned over), `conflicting` adds the canary copy beside the original (the same test
# with the contradicting expectation, under a new name). The tests are tried in an order drawn
# from SEED; the first one the mutator understands is changed. Prints one line of JSON:
# {"test", "mutation", "path", "mutant"?} or {"skipped": why, "uncovered": [...]}.
import importlib.machinery
import importlib.util
import inspect
import json
import os
import random
import sys


def load_runner(path):
    sys.dont_write_bytecode = True
    # tests/run has no .py suffix: its loader is named, not found from the file name.
    loader = importlib.machinery.SourceFileLoader("proctor_task_runner", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def one_off(runner, full, target, rng):
    """Changes `target` of the file in place; returns the mutation's description or None."""
    with open(full, encoding="utf-8", newline="") as f:
        text = f.read()
    tree = runner._ast.parse(text)
    # A runner written before its _Source read tokens lazily takes the text alone.
    takes_tree = len(inspect.signature(runner._Source).parameters) >= 2
    source = runner._Source(text, tree) if takes_tree else runner._Source(text)
    entry = runner._definitions(source, tree).get(target)
    if entry is None:
        return None
    choices = runner._mutations(source, entry[0], rng)
    if isinstance(choices, tuple):
        # A runner whose canaries keep to assertions with only checks after them: the test
        # itself is changed here, not copied, so what runs after its assertion still runs.
        choices = choices[0] + choices[1]
    if not choices:
        return None
    edits, description = rng.choice(choices)
    lines = list(source.lines)
    for (r1, c1), (r2, c2), new in sorted(edits, reverse=True):
        head = lines[r1 - 1][:c1]
        tail = lines[r2 - 1][c2:]
        lines[r1 - 1:r2] = [head + new + tail] + [""] * (r2 - r1)
    with open(full, "w", encoding="utf-8", newline="") as f:
        f.write("".join(lines))
    return description


def conflicting(runner, full, target, rng):
    """Adds the contradicting copy of `target`; returns (its name, description) or None."""
    with open(full, encoding="utf-8", newline="") as f:
        text = f.read()
    new, made, _ = runner.canary_file(text, [target], rng)
    if not made:
        return None
    with open(full, "w", encoding="utf-8", newline="") as f:
        f.write(new)
    _, name, description = made[0]
    return name, description


def main(argv):
    runner_path, worktree, list_file, seed, mode = argv
    runner = load_runner(runner_path)
    ids = runner.read_ids(list_file)
    placements, unplaced = runner.canary_targets(worktree, ids)
    uncovered = [{"test": i, "why": w} for i, w in unplaced]
    candidates = []
    for path in sorted(placements):
        for target, listed in placements[path]:
            candidates.append((path, target, listed))
    rng = random.Random(seed)
    rng.shuffle(candidates)
    # A test listed once first: changing a parametrized function changes every listed case,
    # and its gold patch would then fail more than the one test the variant names.
    candidates.sort(key=lambda c: len(c[2]) > 1)
    for path, target, listed in candidates:
        full = os.path.join(worktree, path)
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        try:
            if mode == "one-off":
                description = one_off(runner, full, target, rng)
                if description is not None:
                    result = {"test": listed[0], "mutation": description, "path": path}
                    break
            else:
                made = conflicting(runner, full, target, rng)
                if made is not None:
                    # A dialect whose ids name a test otherwise (django's) gives its canary_id.
                    mutant_id = getattr(runner, "canary_id", runner.canary_mutant_id)
                    mutant = mutant_id(listed[0], target[1], made[0])
                    result = {"test": listed[0], "mutation": made[1], "path": path,
                              "mutant": mutant}
                    break
        except (SyntaxError, ValueError, UnicodeDecodeError) as error:
            uncovered.append({"test": listed[0], "why": "cannot be read (%s)" % type(error).__name__})
            continue
        uncovered.extend({"test": i, "why": "no assertion the mutator understands"} for i in listed)
    else:
        result = {"skipped": "no hidden test has an assertion the mutator understands",
                  "uncovered": uncovered}
    sys.stdout.write(json.dumps(result, ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
