"""Show the package's own code in a notebook: the book never keeps a second copy of it."""
import ast
import inspect

from IPython.display import Code

#: the comment that stands where input checks were left out of a displayed function
CHECKS_LEFT_OUT = "# (input checks left out here; see the package source)"


def _is_check(node: ast.stmt) -> bool:
    """An input check: a ``check_*(...)`` call, ``if ...: raise``, or a loop of checks."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name.startswith(("check_", "_check"))
    if isinstance(node, ast.Raise):
        return True
    if isinstance(node, ast.If):
        return all(map(_is_check, node.body)) and all(map(_is_check, node.orelse))
    if isinstance(node, ast.For):
        return all(map(_is_check, node.body)) and not node.orelse
    return False


def without_checks(source: str) -> str:
    """``source`` with the input checks at the top level of each function body removed; one
    comment line marks where in each function they were."""
    lines = source.splitlines()
    drop, notes = set(), {}
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        checks = [s for s in func.body if _is_check(s)]
        if checks and len(checks) < len(func.body):
            first = checks[0].lineno - 1
            notes[first] = " " * checks[0].col_offset + CHECKS_LEFT_OUT
            for stmt in checks:
                drop.update(range(stmt.lineno - 1, stmt.end_lineno))
    return "\n".join(notes.get(i, line) for i, line in enumerate(lines)
                     if i in notes or i not in drop)


def show_source(obj, checks: bool = False) -> Code:
    """The source of a function, class or method, syntax-highlighted in Jupyter and in the book.

    Input checks are left out (one comment line says where) so that the code reads like the
    maths it implements; ``checks=True`` shows them. Because the notebook's saved output is
    checked against a fresh run, the code the book shows always matches the package.
    """
    try:
        source = inspect.getsource(obj)
    except (TypeError, OSError) as err:
        raise TypeError(f"obj must be a function, class, method or module defined in Python, "
                        f"got {type(obj).__name__}") from err
    source = inspect.cleandoc("\n" + source) if source.startswith((" ", "\t")) else source
    return Code(source if checks else without_checks(source), language="python")
