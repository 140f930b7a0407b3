# ---- the Python runners' test process: the shared core (src/runners/core/python.py in Proctor)
#
# The same bytes are in the pytest, django and sympy runners (Proctor writes this part into each
# when it writes the runner into a bundle); edit src/runners/core/python.py, not a runner's copy.
#
# Their tests run in a process of their own, this file loaded as its module: `_send` writes
# that process's messages to the collector (core/protocol.py), through functions kept before
# any module of the checkout is imported, so that the runner's own use of them cannot be
# redirected by a candidate that replaces them later (and the tripwires see that it did).
# `use_task_python` moves the test side onto the task's interpreter, and `script_argv` starts a
# copy of the runner (through core/loader.py, CODE_LOADER, when the grade shares its compiled
# code); `git` reads the checkout with no configuration of the machine's. Python 3.5 syntax.
import json
import os
import subprocess
import sys

_fd = None
_write = os.write
_dumps = json.dumps
_watch = None


def _send(message):
    if _fd is None:
        return
    data = (_dumps(message, ensure_ascii=True) + "\n").encode("ascii")
    while data:
        data = data[_write(_fd, data):]


def use_task_python(argv):
    """With RUNNER_PYTHON set (in [tests] env: SWE-bench's images keep the project's Python in
    a conda environment, /opt/miniconda3/envs/testbed/bin/python), runs this side of the runner
    again on that interpreter, its folder first on PATH as `conda activate` puts it, so that the
    tests import what is installed there. The collector never comes here: it runs on the
    image's own python3, with an environment of PATH and the locale alone."""
    python = os.environ.pop("RUNNER_PYTHON", "")
    if not python:
        return
    if not (os.path.isabs(python) and os.path.isfile(python) and os.access(python, os.X_OK)):
        sys.stderr.write("proctor: RUNNER_PYTHON %s: no such interpreter in this image\n" % python)
        sys.exit(2)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(python) + os.pathsep + env.get("PATH", "")
    os.execve(python, script_argv(python, os.path.abspath(argv[0])) + list(argv[1:]), env)


def script_argv(python, script):
    """`python SCRIPT`, or `python -c CODE_LOADER SCRIPT` (core/loader.py) where the grade
    shares the runner's compiled code: the same run, without compiling this file again."""
    if os.environ.get("PROCTOR_CODE_CACHE"):
        return [python, "-c", CODE_LOADER, script]
    return [python, script]


def git(args, safe=False):
    """git's output in the checkout, or None. No system or global configuration; with `safe`,
    any owner (the collector reads a work tree another uid owns)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "HOME": "/nonexistent",
    }
    extra = ["-c", "safe.directory=*"] if safe else []
    if safe:
        # Older git (Debian bullseye's 2.30) ignores -c safe.directory but checks the owner
        # all the same; no git checks it for an explicit GIT_DIR.
        env["GIT_DIR"] = os.path.join(os.getcwd(), ".git")
    try:
        result = subprocess.run(
            ["git", "-c", "core.fsmonitor=false"] + extra + args,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def python_main(argv, collect, channel, plain):
    """The command line of a Python runner (core/protocol.py's dispatch): with the canaries'
    trusted step (core/canary.py), and the test side on RUNNER_PYTHON's interpreter."""
    return dispatch(argv, collect, channel, plain, canary=main_canary, test_side=use_task_python)


# ---- end of the Python runners' test process core -------------------------------------------
