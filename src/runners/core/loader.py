# The Python runners' loader (src/runners/core/loader.py in Proctor): `python3 -c LOADER RUNNER
# ARGS…` runs RUNNER as `python3 RUNNER ARGS…` would (the same sys.argv, __file__, sys.path
# and __main__ module), with its compiled code shared by the grade's processes. A 3,000-line
# runner takes 20-30 ms to compile, and a grade starts it up to four times (the collector, the
# canary step, the test side, the test process); loading compiled code takes under 1 ms.
#
# PROCTOR_CODE_CACHE is `UID:FOLDER`. Only a process of UID (the collector's uid) writes there:
# it compiles RUNNER and leaves the code in FOLDER, named by checksums of the source and the
# interpreter. Any other process takes that code only from a folder and a file that UID owns
# and nobody else can write, read through the folder's descriptor (no link followed), so the
# task's processes, which run as another uid, cannot plant code for a later phase's runner; and
# it compiles the runner itself whenever the code is not there yet, is not UID's, or cannot be
# read. The code takes the file name of the process's own RUNNER. Without the variable, or
# before Python 3.8 (no CodeType.replace), every process compiles, as a script would.
# Python 3.5 syntax; the standard library alone, imported once sys.path is the script's.
import sys

_proctor_path = sys.argv[1]
if sys.path[:1] == [""]:
    # `-c` puts the current folder (the checkout) first; a script puts its own folder there.
    sys.path[0] = "/"
import os

if sys.path[:1] == ["/"]:
    sys.path[0] = os.path.dirname(os.path.realpath(_proctor_path))


def _proctor_code(path, cache):
    with open(path, "rb") as f:
        source = f.read()
    code_type = type(_proctor_code.__code__)
    uid, _, folder = (cache or "").partition(":")
    if not (folder and uid.isdigit() and hasattr(code_type, "replace")):
        return compile(source, path, "exec")
    import marshal
    import stat
    import zlib

    uid = int(uid)
    # Not a defence (only UID writes there): the code of this source on this interpreter.
    key = "%08x-%d-%08x" % (
        zlib.crc32(("%s %s" % (sys.version, sys.implementation.cache_tag)).encode("utf-8")),
        len(source), zlib.crc32(source))

    def trusted(st):
        return st.st_uid == uid and not st.st_mode & 0o022

    def read():
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
        try:
            folder_fd = os.open(folder, flags | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None
        try:
            if not trusted(os.fstat(folder_fd)):
                return None
            fd = os.open(key, flags, dir_fd=folder_fd)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not (stat.S_ISREG(st.st_mode) and trusted(st) and st.st_nlink == 1):
                    return None
                data = f.read()
        except OSError:
            return None
        finally:
            os.close(folder_fd)
        try:
            code = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, code_type) else None

    def refile(code):
        consts = tuple(refile(c) if isinstance(c, code_type) else c for c in code.co_consts)
        return code.replace(co_filename=path, co_consts=consts)

    code = read()
    if code is not None:
        return refile(code)
    code = compile(source, path, "exec")
    if os.getuid() == uid:
        try:
            try:
                os.mkdir(folder, 0o755)
            except FileExistsError:
                pass
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
            folder_fd = os.open(folder, flags)
            try:
                os.fchmod(folder_fd, 0o755)
                if trusted(os.fstat(folder_fd)):
                    part = "%s.%d" % (key, os.getpid())
                    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o644, dir_fd=folder_fd)
                    with os.fdopen(fd, "wb") as f:
                        os.fchmod(f.fileno(), 0o644)
                        f.write(marshal.dumps(code))
                    os.rename(part, key, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
            finally:
                os.close(folder_fd)
        except OSError:
            pass
    return code


def _proctor_main(sys=sys, os=os):
    """The runner's code, and __main__'s namespace as a script's: the loader's names gone."""
    from importlib.machinery import SourceFileLoader

    path = _proctor_path
    code = _proctor_code(path, os.environ.get("PROCTOR_CODE_CACHE"))
    sys.argv[:] = sys.argv[1:]
    namespace = sys.modules["__main__"].__dict__
    for name in [n for n in namespace if n not in ("__name__", "__builtins__", "__annotations__")]:
        del namespace[name]
    namespace.update(__file__=path, __cached__=None, __doc__=None, __package__=None,
                     __spec__=None, __loader__=SourceFileLoader("__main__", path))
    return code, namespace


exec(*_proctor_main())
