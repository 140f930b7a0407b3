# ---- tripwires: the shared core (src/runners/core/tripwires.py in Proctor) -----------------
#
# The same bytes are in every built-in Python runner (Proctor writes this part into each when
# it writes the runner into a bundle); edit src/runners/core/tripwires.py, not a runner's copy.
#
# A tripwire records, in the test process and before any module of the checkout is imported,
# what decides a test's outcome, and later reports what changed as a `tamper` message: the
# oracle then ends the grade FAIL, TAMPERED, naming it. This part holds what does not depend on
# the test framework:
#   _Watched     objects found by name (a function, a class, a method) and whole modules
#                (every function and class they define, every method of those classes),
#                each compared by identity and code object with what it was at the start;
#   _ImportWatch sys.meta_path, sys.path_hooks and the checkout's import caches, and the
#                class and loader of each test module;
#   _CodeWatch   a test function's code against the code compiled from its file's source.
# Each runner adds what its framework runs (pytest's items and hooks, unittest's result, sympy's
# test functions) and decides when to check. Only the standard library, and Python 3.5 syntax.

# The modules of the import machinery whose classes the frozen copies define.
FROZEN = {"importlib._bootstrap": "_frozen_importlib",
          "importlib._bootstrap_external": "_frozen_importlib_external"}


def _identity(value):
    """What must stay the same of a watched object: itself and, for functions (bare, or
    inside a method, property or descriptor), their code objects."""
    parts = [id(value)]
    for attr in ("__func__", "fget", "fset", "__wrapped__"):
        inner = getattr(value, attr, None)
        if inner is not None:
            parts.append(id(inner))
            parts.append(id(getattr(inner, "__code__", None)))
    parts.append(id(getattr(value, "__code__", None)))
    return tuple(parts)


def _module(name):
    module = sys.modules.get(name)
    if module is None:
        try:
            module = __import__(name, fromlist=["_"])
        except Exception:
            return None
    return module


def _inside_checkout(path):
    """Whether `path` is in the checkout (the test process's working folder)."""
    top = os.path.realpath(os.getcwd())
    path = os.path.realpath(path or ".")
    return path == top or path.startswith(top.rstrip("/") + "/")


def _name(thing):
    kind = thing if isinstance(thing, type) else type(thing)
    return "%s.%s" % (getattr(kind, "__module__", "?"), getattr(kind, "__name__", "?"))


class _Watched:
    """Objects recorded by label with a getter, each compared later by _identity: `changed()`
    names those replaced. The recorded object is kept alive, so its id stays its own."""

    def __init__(self):
        self.fixed = []  # (label, getter, identity, value)
        self.labels = set()

    def add(self, label, getter):
        if label in self.labels:
            return
        self.labels.add(label)
        value = getter()
        self.fixed.append((label, getter, _identity(value), value))

    def add_names(self, watched):
        """[(module, class or None, [names])]: each name the module (or its class) defines
        itself; a module or class that is not there is skipped (they differ across versions)."""
        for module_name, class_name, names in watched:
            module = _module(module_name)
            if module is None:
                continue
            owner = getattr(module, class_name, None) if class_name else module
            if owner is None:
                continue
            where = vars(owner)
            for name in names:
                if name not in where:
                    continue
                label = "%s.%s" % (module_name, "%s.%s" % (class_name, name) if class_name else name)
                self.add(label, (lambda w=where, n=name: w.get(n)))

    def add_module(self, module_name):
        """Every function `module_name` defines, every class it defines and their methods (a
        module that is not there is skipped). What it imports from elsewhere is left out."""
        import types

        module = _module(module_name)
        if module is None:
            return
        own = (module_name, getattr(module, "__name__", module_name), FROZEN.get(module_name))
        space = vars(module)
        kinds = (types.FunctionType, classmethod, staticmethod, property)
        for name, value in sorted(space.items(), key=lambda kv: kv[0]):
            if getattr(value, "__module__", None) not in own:
                continue
            if isinstance(value, type):
                self.add("%s.%s" % (module_name, name), (lambda n=name: space.get(n)))
                members = vars(value)
                for attr in sorted(members):
                    if isinstance(members[attr], kinds):
                        self.add("%s.%s.%s" % (module_name, name, attr),
                                 (lambda m=members, a=attr: m.get(a)))
            elif isinstance(value, types.FunctionType):
                self.add("%s.%s" % (module_name, name), (lambda n=name: space.get(n)))

    def changed(self):
        found = []
        for label, getter, identity, _ in self.fixed:
            try:
                now = _identity(getter())
            except Exception:
                now = None
            if now != identity:
                found.append("%s was replaced" % label)
        return found


class _ImportWatch:
    """sys.meta_path, sys.path_hooks and the checkout's entries of sys.path_importer_cache,
    as they were before any module of the checkout was imported. A finder put ahead of the
    path finder, a path hook ahead of the file finder's, either of those two removed, or a
    folder of the checkout given a finder of another kind could hand the runner other code
    than a test file holds. `finders` are finder classes the framework adds itself (pytest's
    assertion rewriter); `loaders` the loader classes a test module may have besides the
    standard source loader. (Finders appended after the path finder, as six and setuptools add
    theirs, never see a test module: the path finder finds it first.)"""

    def __init__(self, finders=(), loaders=()):
        import importlib.machinery

        self.meta_path = list(sys.meta_path)
        self.path_hooks = list(sys.path_hooks)
        self.path_finder = importlib.machinery.PathFinder
        self.file_finder = importlib.machinery.FileFinder
        self.finders = tuple(t for t in finders if t is not None)
        self.loaders = (importlib.machinery.SourceFileLoader,) + tuple(t for t in loaders if t is not None)
        self.modules = set()

    def check(self):
        changed = []
        now = list(sys.meta_path) if isinstance(sys.meta_path, list) else []
        # Only the path finder's going counts: setuptools takes its own finder out again.
        if not any(e is self.path_finder for e in now):
            changed.append("sys.meta_path lost the path finder")
        ahead = True
        for entry in now:
            if entry is self.path_finder:
                ahead = False
            elif ahead and not any(e is entry for e in self.meta_path) and not isinstance(entry, self.finders):
                changed.append("sys.meta_path gained %s ahead of the path finder" % _name(entry))
        now = list(sys.path_hooks) if isinstance(sys.path_hooks, list) else []
        last = self.path_hooks[-1] if self.path_hooks else None
        if last is not None and not any(e is last for e in now):
            changed.append("sys.path_hooks lost the file finder's hook")
        for entry in now:
            if entry is last:
                break
            if not any(e is entry for e in self.path_hooks):
                changed.append("sys.path_hooks gained %s ahead of the file finder's" % _name(entry))
        for path, finder in list(getattr(sys, "path_importer_cache", {}).items()):
            if finder is None or type(finder) is self.file_finder:
                continue
            if isinstance(path, str) and _inside_checkout(path) and os.path.isdir(path):
                changed.append("the checkout's folder %s has the finder %s" % (path, _name(finder)))
        return changed

    def check_module(self, module):
        """A test module: a plain module, loaded by the standard loader or one of `loaders`."""
        import types

        if id(module) in self.modules:
            return []
        self.modules.add(id(module))
        name = getattr(module, "__name__", "?")
        if type(module) is not types.ModuleType:
            return ["the class of the test module %s was replaced by %s" % (name, _name(type(module)))]
        spec = getattr(module, "__spec__", None)
        loaders = [("__loader__", getattr(module, "__loader__", None))]
        if spec is not None:
            loaders.append(("__spec__.loader", getattr(spec, "loader", None)))
        return ["the test module %s was loaded by %s (its %s)" % (name, _name(loader), where)
                for where, loader in loaders if type(loader) not in self.loaders]


def _skip_wrapper_code():
    """The code of the wrapper unittest.skip puts on a test function (read before any module
    of the checkout is imported), or None where it puts none."""
    import unittest

    def probe(self):
        pass

    try:
        wrapper = unittest.skip("probe")(probe)
    except Exception:
        return None
    code = getattr(wrapper, "__code__", None)
    return None if code is None or code is probe.__code__ else code


class _CodeWatch:
    """The test functions' code, against the code compiled from their files: the files in
    `paths` are read at once (before any module of the checkout is imported); any other file is
    read when it is first checked. A function must be one of its file's, compiled as plain
    Python (and as a runner's subclass adds in `_rewritten`): the same instructions, names and
    constants. Where the file's definition has a decorator that is not a mark, the function may
    be a wrapper that leads to one (its __wrapped__ or its closure). A function from another
    file is trusted only when the test process could not have written that file."""

    def __init__(self, paths=()):
        import ast

        self.compile = compile
        self.ast = ast
        self.skip_code = _skip_wrapper_code()
        self.sources = {}
        self.compiled = {}
        self.verified = {}
        self.trusted = {}
        for path in paths:
            self._source(path)
        self.head = _head_blobs()

    def _source(self, path):
        key = os.path.realpath(path)
        if key not in self.sources:
            try:
                with open(key, "rb") as f:
                    self.sources[key] = f.read()
            except OSError:
                self.sources[key] = None
        return self.sources[key]

    def check_function(self, function, name, path, origin=None, extra=None):
        """Whether `function` (the test `name`) is its file's: True also when it cannot be
        told (a file that cannot be read or compiled)."""
        origin = origin or path
        known = self._codes(path, origin, extra)
        if known is None or function is None:
            return True
        return self._matches(function, name, known, (path, origin), extra)

    def _matches(self, function, name, known, paths, extra):
        """Whether `function` is the test `name` of the item's file (`known`, compiled), or,
        where its code says it comes from another file, that file's function of that name,
        the file being one the tests' process could not have written (unchanged from HEAD in
        the checkout, or outside it in a folder it cannot write). A function the item's file
        does not define by that name cannot be told: it passes."""
        top = getattr(function, "__func__", function)
        cache = (id(top), id(getattr(top, "__code__", None)))
        if cache in self.verified:
            return self.verified[cache][1]
        code = getattr(top, "__code__", None)
        keys = known[0].get(name, ())
        ok = self._reaches(top, keys, name in known[1])
        if not ok and code is not None and code is self.skip_code:
            # unittest.skip's own wrapper, put on a test by the test machinery (Django marks
            # its database backend's known skips so): whatever it wraps, it can only skip.
            ok = True
        if not ok and code is not None:
            filename = code.co_filename
            ours = [os.path.realpath(p) for p in paths]
            if os.path.realpath(filename) not in ours:
                other = self._trusted_codes(filename, extra)
                if other is not None and name in known[1]:
                    ok = True  # a decorator's wrapper, from a file the tests could not write
                elif other is not None:
                    ok = code.co_name == name and _code_key(code) in other[0].get(name, ())
                else:
                    ok = name not in known[0]
        self.verified[cache] = (top, ok)  # the function kept alive: its id stays its own
        return ok

    def _trusted_codes(self, filename, extra):
        if filename in self.trusted:
            return self.trusted[filename]
        found = None
        real = os.path.realpath(filename)
        try:
            if _inside_checkout(real):
                relative = os.path.relpath(real, os.path.realpath(os.getcwd()))
                with open(real, "rb") as f:
                    data = f.read()
                trusted = self.head.get(relative) == _blob_id(data)
                if trusted:
                    self.sources[real] = data
            else:
                folder = os.path.dirname(real)
                trusted = os.path.isfile(real) and not os.access(folder, os.W_OK) and not os.access(real, os.W_OK)
            if trusted:
                found = self._codes(real, filename, extra)
        except OSError:
            found = None
        self.trusted[filename] = found
        return found

    def _reaches(self, top, keys, decorated):
        code = getattr(top, "__code__", None)
        ok = code is not None and _code_key(code) in keys
        if not ok and decorated:
            seen = set()
            reach = [(top, 0)]
            while reach and not ok:
                thing, depth = reach.pop()
                if id(thing) in seen or depth > 4:
                    continue
                seen.add(id(thing))
                inner = getattr(thing, "__code__", None)
                if inner is not None and _code_key(inner) in keys:
                    ok = True
                    break
                nexts = [getattr(thing, "__wrapped__", None), getattr(thing, "__func__", None)]
                for cell in getattr(thing, "__closure__", None) or ():
                    try:
                        nexts.append(cell.cell_contents)
                    except ValueError:
                        pass
                reach += [(n, depth + 1) for n in nexts if callable(n)]
        return ok

    def _codes(self, path, origin, extra):
        """({function name: set of code keys}, names defined with a decorator that is not a
        mark), from the file as first read; None when it cannot be read or compiled."""
        key = os.path.realpath(path)
        if key in self.compiled:
            return self.compiled[key]
        source = self._source(path)
        found = None
        if source is not None:
            try:
                codes = {}
                tree = self.compile(source, origin, "exec", self.ast.PyCF_ONLY_AST, True)
                decorated = _decorated(self.ast, tree)
                _collect_codes(self.compile(tree, origin, "exec", 0, True), codes)
                rewritten = self._rewritten(source, origin, extra)
                if rewritten is not None:
                    _collect_codes(rewritten, codes)
                found = (codes, decorated)
            except Exception:
                found = None  # a file Python cannot compile: its import fails anyway
        self.compiled[key] = found
        return found

    def _rewritten(self, source, origin, extra):
        """The file's code as the framework itself would compile it, or None (plain Python)."""
        return None


def _blob_id(data):
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _head_blobs():
    """{path: blob id} of HEAD's files, read with git before any module of the checkout is
    imported ({} outside a git work tree, or without git), through core/python.py's git."""
    listing = git(["ls-tree", "-r", "-z", "HEAD"], safe=True) or b""
    blobs = {}
    for entry in listing.split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            blobs[raw.decode("utf-8", "surrogateescape")] = parts[2].decode("ascii")
    return blobs


def _code_key(code):
    """What must be the same of two code objects for them to run the same: instructions,
    names, and constants (nested code compared the same way); never where they came from."""
    import types

    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, consts)


def _collect_codes(code, codes):
    import types

    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            codes.setdefault(const.co_name, set()).add(_code_key(const))
            _collect_codes(const, codes)


def _decorated(ast, tree):
    """Names of functions defined with a decorator that is not a mark (`pytest.mark.x`,
    `mark.x(…)`): such a decorator may wrap the function."""
    kinds = tuple(k for k in (getattr(ast, "FunctionDef", None), getattr(ast, "AsyncFunctionDef", None)) if k)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, kinds):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                parts = []
                while isinstance(target, ast.Attribute):
                    parts.append(target.attr)
                    target = target.value
                if isinstance(target, ast.Name):
                    parts.append(target.id)
                if "mark" not in parts:
                    names.add(node.name)
    return names
