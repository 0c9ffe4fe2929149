"""What a piece of code is, as a short stable hash: reward functions, parsers, environment modules.

A resumed run must notice a reward function whose code changed under the same name. A function
is identified by its source, parsed and dumped as an AST (so whitespace, comments and docstrings
do not count; any change to what runs does), or, where no source can be found (a function
``exec``'d from a string, a class defined in a notebook's ``__main__``), by its normalised
bytecode: instructions, constants (nested code objects included), names and argument names,
without line numbers. Lambdas always go by bytecode (their source is the whole line they sit on,
shared with any neighbour). Around the code come the values it closes over, its defaults, and
the globals it reads that decide its result: same-module functions (hashed in turn) and scalar
constants. ``functools.partial`` adds its arguments, a bound method its class, a callable object
its class's code and attributes. Values go in by a stable repr (memory addresses removed, sets
and dict keys sorted), so two processes running the same code agree.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import inspect
import re
import textwrap
import types
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # a default repr: the object's memory address
_SCALARS = (str, int, float, bool, complex, bytes, type(None))
_MAX_DEPTH = 6


def code_hash(obj: Any) -> str:
    """A 16-hex-digit hash of what ``obj`` (function, method, partial, callable object, parser,
    class or module) runs; equal for the same code in any process."""
    return _digest(describe(obj))


def describe(obj: Any) -> str:
    """The canonical text :func:`code_hash` hashes (useful to see why two hashes differ)."""
    return _Describer().value(obj, 0)


def code_parts(obj: Any) -> dict[str, Any]:
    """What ``obj`` runs, piece by piece: ``{"own": hash, "helpers": {qualname: hash}}``, its own
    code with each same-module function or class it reads (transitively) hashed apart, each
    without its own helpers. Where :func:`code_hash` changed, the pieces whose hash changed say
    what changed: the function itself, or a helper it calls."""
    top = _Describer(shallow=True)
    own = _digest(top.value(obj, 0))
    helpers: dict[str, str] = {}
    seen, todo = {id(obj)}, list(top.reached)
    while todo:
        piece = todo.pop(0)
        if id(piece) in seen:
            continue
        seen.add(id(piece))
        describer = _Describer(shallow=True)
        helpers[piece.__qualname__] = _digest(describer.value(piece, 0))
        todo.extend(describer.reached)
    return {"own": own, "helpers": dict(sorted(helpers.items()))}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _normalised_source(text: str) -> str | None:
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]  # a docstring does not change behaviour
    return ast.dump(tree)


def _function_source(func: types.FunctionType) -> str | None:
    if func.__name__ == "<lambda>":
        return None
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    return _normalised_source(source)


def _class_source(klass: type) -> str:
    """``inspect.getsource(klass)``, refused (OSError) when it is another file's text: on Python
    3.13 a class exec'd in ``__main__`` (a notebook cell) is looked up by line number in the
    ``__main__`` module's file, whatever that file holds."""
    source = inspect.getsource(klass)
    own = {
        v.__code__.co_filename for v in vars(klass).values() if isinstance(v, types.FunctionType)
    }
    if own and own != {inspect.getfile(klass)}:
        raise OSError(
            f"{klass.__qualname__}: its methods come from {sorted(own)}, not {inspect.getfile(klass)}"
        )
    return source


def _without_docstring(func: types.FunctionType) -> types.CodeType:
    """The function's code with its docstring constant blanked, as the source path drops it."""
    code = func.__code__
    if func.__doc__ is not None and code.co_consts and code.co_consts[0] == func.__doc__:
        return code.replace(co_consts=(None, *code.co_consts[1:]))
    return code


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class _Describer:
    """One description pass; ``seen`` breaks cycles (a function that calls itself, a closure
    over the object whose method it is). A ``shallow`` pass names the same-module functions
    and classes the code reads instead of describing them, and lists them in ``reached``."""

    def __init__(self, shallow: bool = False) -> None:
        self.seen: set[int] = set()
        self.shallow = shallow
        self.reached: list[types.FunctionType | type] = []

    def value(self, obj: Any, depth: int) -> str:
        if isinstance(obj, _SCALARS):
            return repr(obj)
        if depth > _MAX_DEPTH or id(obj) in self.seen:
            return f"<{_type_name(obj)}>"
        self.seen.add(id(obj))
        try:
            return self._described(obj, depth + 1)
        finally:
            self.seen.discard(id(obj))

    def _described(self, obj: Any, depth: int) -> str:
        if isinstance(obj, (list, tuple)):
            return f"{type(obj).__name__}[" + ",".join(self.value(v, depth) for v in obj) + "]"
        if isinstance(obj, (set, frozenset)):
            return "set{" + ",".join(sorted(self.value(v, depth) for v in obj)) + "}"
        if isinstance(obj, dict):
            items = sorted(f"{self.value(k, depth)}:{self.value(v, depth)}" for k, v in obj.items())
            return "dict{" + ",".join(items) + "}"
        if isinstance(obj, types.FunctionType):
            return self._function(obj, depth)
        if isinstance(obj, types.MethodType):
            owner = obj.__self__
            # A rubric's own method (a judge's): the rubric's fingerprint_extra says its settings.
            is_rubric = hasattr(owner, "funcs") and hasattr(owner, "weights")
            shown = f"<{_type_name(owner)}>" if is_rubric else self.value(owner, depth)
            return f"method {shown}.{self.value(obj.__func__, depth)}"
        if isinstance(obj, functools.partial):
            return (
                f"partial({self.value(obj.func, depth)}, {self.value(obj.args, depth)}, "
                f"{self.value(obj.keywords, depth)})"
            )
        if isinstance(obj, types.ModuleType):
            return f"module {obj.__name__}"
        if isinstance(obj, type):
            return self._class(obj, depth)
        if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            return f"builtin {getattr(obj, '__module__', None)}.{obj.__qualname__}"
        text = repr(obj)
        if callable(obj) or _ADDRESS.search(text):  # no repr of its own: its class and attributes
            return self._instance(obj, depth)
        return text

    def _function(self, func: types.FunctionType, depth: int) -> str:
        unwrapped = inspect.unwrap(func)
        code = _function_source(func) or self._bytecode(_without_docstring(func), depth)
        parts = [
            f"def {func.__qualname__}",
            code,
            f"defaults={self.value(func.__defaults__, depth)}",
            f"kwdefaults={self.value(func.__kwdefaults__, depth)}",
        ]
        if unwrapped is not func:  # a decorator's wrapper: the wrapped function's code too
            parts.append(f"wraps={self.value(unwrapped, depth)}")
        if func.__closure__:
            cells = []
            for name, cell in zip(func.__code__.co_freevars, func.__closure__, strict=True):
                try:
                    cells.append(f"{name}={self.value(cell.cell_contents, depth)}")
                except ValueError:  # an empty cell (a variable not yet assigned)
                    cells.append(f"{name}=<empty>")
            parts.append("closure=" + ",".join(cells))
        parts.append("globals=" + ",".join(self._globals(func, depth)))
        return "(" + ";".join(parts) + ")"

    def _bytecode(self, code: types.CodeType, depth: int) -> str:
        # frozenset constants: sorted, whatever the hash seed
        consts = [
            f"<code {self._bytecode(c, depth)}>"
            if isinstance(c, types.CodeType)
            else self.value(c, depth)
            for c in code.co_consts
        ]
        return "|".join(
            (
                code.co_code.hex(),
                ",".join(consts),
                ",".join(code.co_names),
                ",".join(code.co_varnames),
                ",".join(code.co_freevars),
                str(code.co_argcount),
                str(code.co_kwonlyargcount),
                str(code.co_flags),
            )
        )

    def _globals(self, func: types.FunctionType, depth: int) -> list[str]:
        """The globals the code reads that decide its result and are the user's own: functions
        and classes of the same module, and scalar constants. Library objects are left to the
        versions recorded beside the fingerprint."""
        out = []
        module = func.__module__
        for name in sorted(_global_names(func.__code__)):
            if name not in func.__globals__:
                continue
            value = func.__globals__[name]
            if isinstance(value, _SCALARS):
                out.append(f"{name}={value!r}")
            elif isinstance(value, (types.FunctionType, type)) and value.__module__ == module:
                if self.shallow:
                    self.reached.append(value)
                    out.append(f"{name}=<helper {value.__qualname__}>")
                else:
                    out.append(f"{name}={self.value(value, depth)}")
        return out

    def _class(self, cls: type, depth: int) -> str:
        if _is_builtin(cls):
            return f"class {cls.__qualname__}"
        parts = []
        for klass in cls.__mro__:
            if _is_builtin(klass):
                continue
            try:
                parts.append(_normalised_source(_class_source(klass)) or "")
            except (OSError, TypeError):  # no source (a notebook's __main__, exec'd code)
                methods = sorted(
                    f"{k}={self.value(v, depth)}"
                    for k, v in vars(klass).items()
                    if isinstance(v, (types.FunctionType, staticmethod, classmethod, property))
                    or isinstance(v, _SCALARS)
                    and not k.startswith("__")
                )
                parts.append(",".join(methods))
        return f"class {cls.__qualname__}(" + "|".join(parts) + ")"

    def _instance(self, obj: Any, depth: int) -> str:
        attrs = _plain_vars(obj)
        shown = ",".join(f"{k}={self.value(v, depth)}" for k, v in sorted(attrs.items()))
        return f"{self._class(type(obj), depth)}{{{shown}}}"


def _is_builtin(cls: type) -> bool:
    return cls.__module__ == "builtins" and getattr(builtins, cls.__name__, None) is cls


def _type_name(obj: Any) -> str:
    return type(obj).__qualname__


def _plain_vars(obj: Any) -> dict[str, Any]:
    try:
        attrs = vars(obj)
    except TypeError:
        return {}
    # Private attributes hold caches, clients, locks and per-loop state, not configuration.
    return {k: v for k, v in attrs.items() if not k.startswith("_")}
