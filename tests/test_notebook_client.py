"""Headless notebook runs must not stall in the client (benchmarks/notebook_client.py).

Chapter 3 once took 631.6 s instead of about 40 s in benchmarks/course_runtime: an explorer cell
(``interact``, whose output goes into an ipywidgets Output widget) had finished, its execute_reply
had reached nbclient, but nbclient's event loop was never woken for it; the kernel sat idle and the
client waited out its 600 s per-cell timeout, then went on. nbclient's Output widget imitation sends
the widget's state on the shell socket with a raw send that drains the socket's edge-triggered
wake-up (see the module docstring). These tests fail within seconds if that comes back.
"""
import asyncio
import time
import types

import nbformat
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session
from nbformat.v4 import new_code_cell, new_notebook

from benchmarks.notebook_client import MAX_REPLY_LAG, CourseNotebookClient, SafeOutputWidget

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


async def _reply_seconds_after_widget_send(widget_class, wait: float) -> float | None:
    """Seconds until a waiting ``get_msg`` sees an execute_reply that arrived just before the
    Output widget sent its state on the same socket; None if not seen within ``wait`` seconds."""
    kernel_context, client_context = zmq.Context(), zmq.asyncio.Context()
    router = kernel_context.socket(zmq.ROUTER)                   # the kernel's shell socket
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = client_context.socket(zmq.DEALER)                   # the client's, as jupyter_client makes it
    dealer.connect(f"tcp://127.0.0.1:{port}")
    session = Session(key=b"test")
    shell = AsyncZMQSocketChannel(dealer, session)
    try:
        request = session.msg("execute_request", content={"code": ""})
        shell.send(request)
        assert router.poll(10_000), "the request never reached the kernel side"
        identity = router.recv_multipart()[0]
        kernel_client = types.SimpleNamespace(session=session, shell_channel=shell)
        widget = widget_class("comm-id", {"outputs": []}, kernel_client, None)
        widget.parent_header = request["header"]
        waiting = asyncio.ensure_future(shell.get_msg(timeout=30))
        await asyncio.sleep(0.1)                                 # the client now polls its socket
        reply = session.msg("execute_reply", content={"status": "ok"}, parent=request)
        router.send_multipart([identity, *session.serialize(reply)])
        time.sleep(0.2)          # the reply reaches the client's socket; the event loop cannot run
        widget.sync_state()      # a cell printed into the widget: its state goes to the kernel
        start = time.perf_counter()
        try:
            got = await asyncio.wait_for(waiting, wait)
        except asyncio.TimeoutError:
            return None
        assert got["msg_type"] == "execute_reply"
        return time.perf_counter() - start
    finally:
        dealer.close(linger=0)
        router.close(linger=0)
        client_context.term()
        kernel_context.term()


def test_output_widget_state_sent_while_a_reply_waits_does_not_strand_the_reply():
    # nbclient's own OutputWidget leaves the reply unseen until get_msg's timeout (30 s here)
    for _ in range(3):
        seconds = asyncio.run(_reply_seconds_after_widget_send(SafeOutputWidget, wait=3.0))
        assert seconds is not None and seconds < 1.0, "the reply was stranded in the client"


def progress_and_explorers_notebook(explorers: int) -> nbformat.NotebookNode:
    """Training with progress bars (widgets in a kernel), then chapter-3-like explorer cells."""
    cells = [
        new_code_cell("import torch\n"
                      "from ipywidgets import IntSlider, Text, interact\n"
                      "from lmcourse.train import fit, progress_enabled\n"
                      "from lmcourse.word2vec import train_word2vec\n"
                      "assert progress_enabled(), 'progress bars are off in the kernel'"),
        new_code_cell("model = torch.nn.Linear(2, 1)\n"
                      "data = [(torch.randn(8, 2), torch.randn(8, 1)) for _ in range(20)]\n"
                      "mse = lambda m, b: torch.nn.functional.mse_loss(m(b[0]), b[1])\n"
                      "print(fit(model, mse, data, num_epochs=2, num_threads=1).steps)"),
        new_code_cell("sentences = [[i % 30, 7 * i % 30, 3 * i % 30, (i + 1) % 30] for i in range(200)]\n"
                      "w2v, history = train_word2vec(sentences, 30, dim=8, epochs=2, batch_size=64)\n"
                      "print(history.steps)"),
        new_code_cell("def neighbours(word='w', k=8):\n"
                      "    for i in range(k):\n"
                      "        print(f'{1 - i / k:6.3f}  {word}{i}')"),
    ]
    cells += [new_code_cell(f"interact(neighbours, word=Text('w{i}'), k=IntSlider(value=8, min=1, max=20));")
              for i in range(explorers)]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                             "display_name": "Python 3"}})


def test_progress_bars_and_output_widgets_run_without_client_stalls(monkeypatch, tmp_path):
    monkeypatch.setenv("LMCOURSE_PROGRESS", "1")      # the kernel inherits it: bars on, as for a reader
    client = CourseNotebookClient(progress_and_explorers_notebook(explorers=60), timeout=30,
                                  stall_error=MAX_REPLY_LAG,
                                  resources={"metadata": {"path": str(tmp_path)}})
    client.execute()                                  # raises ClientStallError at the first stall
    cells = client.nb.cells
    for i in (1, 2):                                  # fit and train_word2vec drew widget bars
        assert any(WIDGET_VIEW in out.get("data", {}) for out in cells[i].outputs), cells[i].outputs
    captured = [state for state in client.widget_state.values()
                if state.get("_model_name") == "OutputModel" and state.get("outputs")]
    assert len(captured) == 60 and "w59" in captured[-1]["outputs"][0]["text"]
    assert client.max_reply_lag < MAX_REPLY_LAG


def test_nbclients_own_output_widget_still_strands_the_reply():
    # the cause, shown: if this starts failing, nbclient fixed it and SafeOutputWidget can go
    from nbclient.output_widget import OutputWidget
    assert asyncio.run(_reply_seconds_after_widget_send(OutputWidget, wait=2.0)) is None
