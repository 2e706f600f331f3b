"""Show the package's own code in a notebook: the book never keeps a second copy of it."""
import inspect

from IPython.display import Code


def show_source(obj) -> Code:
    """The source of a function, class or method, syntax-highlighted in Jupyter and in the book.

    Because the notebook's saved output is checked against a fresh run, the code the book shows
    always matches the package.
    """
    try:
        source = inspect.getsource(obj)
    except (TypeError, OSError) as err:
        raise TypeError(f"obj must be a function, class, method or module defined in Python, "
                        f"got {type(obj).__name__}") from err
    return Code(inspect.cleandoc("\n" + source) if source.startswith((" ", "\t")) else source,
                language="python")
