"""Run a chapter notebook headless, as a reader's "Run all" does, without nbclient's silent stall.

The stall (course_runtime once took 631.6 s for chapter 3 instead of about 40 s): nbclient imitates
a front end for ipywidgets' Output widget. Whenever a cell prints inside one, as every ``interact``
explorer in the chapters does, nbclient's ``OutputWidget`` sends the widget's new state to the
kernel on the shell channel through ``jupyter_client.Session.send``. For an asyncio socket that
helper sends on a *shadow* of the socket, behind pyzmq's back, while nbclient is awaiting the cell's
``execute_reply`` on that same socket. The raw send makes libzmq process the socket's pending
commands, which drains the socket's edge-triggered ``ZMQ_FD``; when the reply has just arrived, the
event loop is never woken for it. The kernel has answered and sits idle; nbclient sits on a reply it
already has until the per-cell timeout ends its poll, finds the reply then, and goes on as if
nothing had happened, having lost the whole timeout (600 s). It can hit any cell whose output
goes into an Output widget, progress bars or not. JupyterLab and nbval are not affected (they do
not send through that helper); ``jupyter nbconvert --execute`` is (it is nbclient).

:class:`CourseNotebookClient` sends those widget messages through the asyncio socket, which
re-checks the socket after every send, and measures each cell: its wall time and how long its
``execute_reply`` had been waiting in the client (the reply lag, near zero unless a wake-up was lost).
"""
import datetime
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.jsonutil import json_clean
from nbclient.output_widget import OutputWidget

#: per-cell limit, seconds: the slowest cell takes well under a minute at full speed and a few
#: minutes under the reference settings; a stalled cell is cut off (and reported) at this bound
CELL_TIMEOUT = 300
#: a reply that waited longer than this in the client means the client missed its wake-up
MAX_REPLY_LAG = 5.0


class SafeOutputWidget(OutputWidget):
    """nbclient's Output widget imitation, sending its state through the asyncio shell socket.

    ``zmq.asyncio.Socket.send_multipart`` sends at once when it can and then re-checks the socket
    for messages that arrived meanwhile, so a waiting ``get_msg`` is woken; the raw send in
    ``Session.send`` does not re-check.
    """

    def _publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        content = json_clean(dict(data={} if data is None else data, comm_id=self.comm_id, **keys))
        session = self.kernel_client.session
        msg = session.msg(msg_type, content=content, parent=self.parent_header,
                          metadata={} if metadata is None else metadata)
        self.kernel_client.shell_channel.socket.send_multipart(session.serialize(msg))


class ClientStallError(RuntimeError):
    """A cell's execute_reply waited in the client longer than allowed."""


class CourseNotebookClient(NotebookClient):
    """A NotebookClient with the safe Output widget that times every cell.

    After ``execute()``: ``cell_seconds`` maps cell index to wall seconds, ``reply_lags`` to the
    seconds between the kernel sending the cell's ``execute_reply`` and this client receiving it.
    stall_error: if given, raise :class:`ClientStallError` as soon as a reply lag exceeds it.
    """

    def __init__(self, nb, stall_error: float | None = None, **kwargs):
        kwargs.setdefault("timeout", CELL_TIMEOUT)
        kwargs.setdefault("kernel_name", "python3")
        super().__init__(nb, **kwargs)
        self.stall_error = stall_error
        self.widget_registry = {**self.widget_registry,
                                "@jupyter-widgets/output": {"OutputModel": SafeOutputWidget}}
        self.cell_seconds: dict[int, float] = {}
        self.reply_lags: dict[int, float] = {}
        self._cell_start: dict[int, float] = {}
        self.on_cell_execute = self._started
        self.on_cell_executed = self._finished

    def _started(self, cell, cell_index):
        self._cell_start[cell_index] = time.perf_counter()

    def _finished(self, cell, cell_index, execute_reply):
        self.cell_seconds[cell_index] = time.perf_counter() - self._cell_start[cell_index]
        sent = execute_reply["header"]["date"]
        if isinstance(sent, str):
            sent = datetime.datetime.fromisoformat(sent.replace("Z", "+00:00"))
        if sent.tzinfo is None:
            sent = sent.replace(tzinfo=datetime.timezone.utc)
        received = datetime.datetime.now(datetime.timezone.utc)
        lag = self.reply_lags[cell_index] = max(0.0, (received - sent).total_seconds())
        if self.stall_error is not None and lag > self.stall_error:
            raise ClientStallError(f"cell {cell_index}: its execute_reply waited {lag:.1f} s in the "
                                   f"client (cell took {self.cell_seconds[cell_index]:.1f} s)")

    @property
    def max_reply_lag(self) -> float:
        return max(self.reply_lags.values(), default=0.0)


def notebook_client(path: str | Path, **kwargs) -> CourseNotebookClient:
    """A client for the notebook at ``path``, run in its own folder (as the chapters expect)."""
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    return CourseNotebookClient(notebook, resources={"metadata": {"path": str(path.parent)}},
                                **kwargs)



def execute_in_place(paths: list[str], timeout: int = 600) -> None:
    """Run each notebook top to bottom and save its outputs (``make execute``), raising at the
    first error or client stall."""
    for path in paths:
        client = notebook_client(path, timeout=timeout, stall_error=MAX_REPLY_LAG)
        client.execute()
        nbformat.write(client.nb, path)
        print(f"{path}: {sum(client.cell_seconds.values()):.0f} s", flush=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.notebook_client NOTEBOOK ...`` (``make execute``)."""
    import argparse

    from lmcourse.cli import notebook_file, positive_int

    parser = argparse.ArgumentParser(prog="python -m benchmarks.notebook_client",
                                     description="Run notebooks top to bottom and save their outputs in place.")
    parser.add_argument("notebooks", nargs="+", type=notebook_file, metavar="NOTEBOOK", help=".ipynb files")
    parser.add_argument("--timeout", type=positive_int, default=600, help="seconds a cell may take (default: 600)")
    args = parser.parse_args(argv)
    execute_in_place([str(p) for p in args.notebooks], timeout=args.timeout)


if __name__ == "__main__":
    main()
