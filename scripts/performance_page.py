"""Regenerate ``performance.md`` from ``benchmarks/results.json`` (written by
``python -m benchmarks.run --save``). ``tests/test_book_pages.py`` fails while the committed page
is out of date with the committed results.

The page puts side by side the runs of the newest code (the same code fingerprint), and every other
run under History; its GPU section comes from ``benchmarks/gpu_results.json`` where that exists.
It reads nothing but those files, so the same files always give the same page.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_sources import ROOT  # noqa: E402

HEADER = """# Performance

A course whose code is fast lets its readers train bigger models on a laptop. The `benchmarks/`
folder measures the course's own implementations against well-known peers on the same machine,
in the same process, on the same inputs and the same number of threads, and reports ratios: a
ratio needs no trust in the machine, only in the fairness of the race. The one race between
different numbers of threads is labelled so wherever it appears: the word2vec details also time
the course's engines on one thread against gensim's two.

* **Fair timing.** The two sides' repetitions are interleaved, in alternating order (A B, B A, ...),
  so that a slow moment of a shared machine hits both; each side's best repetition is kept.
* **Same work.** Models get the same weights (checked: the outputs must agree before timing
  starts), the same batches and the same optimiser; tokenizers must produce identical ids.
* **Honest figures.** Each benchmark prints its figure last and exits non-zero when it misses its
  target. On one of the machines below, two identical copies of one model, timed this way in one run,
  differed by up to 5%: a ratio within a few percent of 1.0 means "as fast as", which is why the
  BERT benchmark reports the median of five trials.
* **Targets.** On every kind of CPU: GPT training at least 1.1x transformers' tokens/s, with its
  model FLOP/s utilisation reported against the matrix-product peak the benchmark measures; BERT
  inference at least 1.1x transformers' tokens/s on padded batches of sentences and at parity on
  full windows, where both run the same kernels (at least 0.97x: within the differences of
  identical copies); word2vec at least as fast as gensim at the same WordSim-353 quality;
  WordPiece tokenization ahead of Hugging Face's Rust `tokenizers`, with identical ids. The whole
  course's time budget scales with the machine: 8 minutes for every chapter and 90 s a chapter
  (120 s for chapters 9 and 10) where the measured matrix-product peak is at least 150 GFLOP/s,
  and those times 150 / peak on a slower machine.
* **Same code side by side.** A saved run records its commit and a fingerprint of the code it
  measured (a hash of the package's and the benchmarks' sources and of `requirements.lock`). The
  page compares only the runs whose fingerprint is the newest run's, each column naming its machine
  and commit; runs on older code are kept under History, at the end.

Run them all with `make bench` (about 10 minutes), or one with
`.venv/bin/python -m benchmarks.gpt_training`; `benchmarks/README.md` has the details. CI runs
`make bench-smoke`, a quick version of each that checks that it runs, not its target.

## What makes the course fast

Profiles (`torch.profiler`, `cProfile`) show where the time goes, and each technique below removes a
cost they show, with the package's parity tests checking that it changes no result. Figures outside
the tables time two alternatives against each other while the change was made, on the code of that
time; each names its machine (below, the Intel Xeon is the machine of the oldest run under History,
the AMD EPYC (AVX2) machine is a Zen 2 and the AMD EPYC of family 26 a Zen 5), except one profile
whose machine was not recorded:

* **word2vec**, written plainly in PyTorch, spends most of its time in autograd's sparse gradients
  and in a binary search for every negative sample. `lmcourse.word2vec.sgd_step` writes word2vec.c's
  update out (a unit test checks it against autograd) and negatives come from word2vec.c's unigram
  table. On the Intel Xeon machine, 10 epochs of this tensor engine on the news corpus, at chapter
  3's settings (50 dimensions, window 5, 5 negatives, batches of 4,096 examples; whether skip-gram or
  CBOW was not recorded), took 2.2 s against 5.8 s with autograd and the binary search.
  On the Zen 2 machine, the scatter-adds into the two tables use `index_put_(..., accumulate=True)`
  (2.1 ms against 2.7 ms with `index_add_` for a batch's 24,576 output rows) and `neu1e` is an
  elementwise product and a sum (1.7 ms against 3.2 ms as a batch of tiny matrix products): there,
  10 epochs of the tensor engine's skip-gram at batch 4,096 take 5.3 s with both against 6.7 s
  without. The tensor engine, on one thread, reaches about a third of the words/s of gensim on two
  (0.316x in the Zen 2 machine's run under History): gensim runs the same arithmetic per pair in C
  without materialising a batch, and a second thread does not help the tensor engine's small
  operations (on the Zen 2 machine, the same 10 epochs took 8.0 s on two threads against 5.1 s on
  one). So the course has a second engine that does what gensim does:
  `train_word2vec(..., engine="compiled")` runs word2vec.c's own loop, one pair at a time with each
  update applied before the next pair is scored, written as a plain Python function
  (`word2vec_c_epoch`) that numba compiles to machine code, float32 in a fixed order (a unit test
  checks it bit for bit against the same loop uncompiled). In the Zen 2 machine's run under History
  it reaches, on one thread, 0.885x the words/s of gensim on two; with `workers=2` two threads train
  blocks of 10,000 words on copies of the tables and add their updates in a fixed order, so a run
  stays reproducible (gensim's lock-free threads are not), and it reads 1.5x gensim's words/s, two
  threads against two, at the same WordSim-353 quality. The tables below give every machine's
  figures. The tensor engine is the teaching version of chapter 3.
* **BERT** need not keep every layer's output alive when the caller does not ask for the hidden
  states, nor a layer's attention output through its feed-forward block. Neither costs any
  arithmetic, but both make the memory allocator hand out fresh pages for the large feed-forward
  activations, so `BertModel` keeps neither, and its self-attention computes Q, K and V with one
  matrix product instead of three. That makes the course's encoder as fast as transformers' on full
  windows, and no faster: a profile of both on 32 windows of 128 tokens (the profile whose machine
  was not recorded) shows 81% of the time in
  the same `addmm` calls (MKL's matrix products), 9% in the same fused attention kernel and 5% in
  GELU. What is left to win is work that need not be done. A batch of sentences is padded to its
  longest one, and on news sentences in batches of 32 about half the positions are padding.
  `BertModel` runs its position-wise layers (the attention output projection, both LayerNorms, the
  feed-forward network: three quarters of each layer's multiply-adds) on the real tokens only,
  packed into an (N, C) matrix, and scatters them back into their rows only for attention
  (`lmcourse.bert.unpack`), the "remove padding" of FasterTransformer and PyTorch's nested-tensor
  encoder. The outputs at real positions are the same as with padding (bit for bit here; the tests
  compare with transformers at 1e-5), and padding comes out as zeros.
* **GPT** uses both of those (one QKV product; PyTorch's fused causal attention where it pays). Both
  sides spend about two thirds of a training step in the same matrix products. With its attention on
  the fused kernel, the course's lead is its fused tanh-GELU (transformers composes it of `mul`,
  `pow`, `add` and `tanh`): 1.08x transformers' tokens/s on the Zen 2 machine, 1.12x on the Zen 5
  one. The next largest item in the course's profile is then the fused attention kernel, about a
  quarter of the step at 128 positions. That kernel is built never to store the (T, T) weights,
  which is what long inputs and GPUs need; at 128 positions the weights are small, and batched
  matrix products (`baddbmm` for the scores with the mask added as -inf, `bmm` for the mixing) do
  the same forward and backward faster. Splitting the queries into two halves also skips the quarter
  of the scores that the mask discards: the first half of the queries never meets the second half of
  the keys. On the Zen 5 machine, causal attention at 128 positions takes 2.4 ms with batched
  products against 3.7 ms with the fused kernel (forward and backward, 16 windows x 4 heads of width
  32; the GPT details below time both routes at 64 to 512 positions).
  `lmcourse.attention.causal_attention` takes the batched route on a CPU up to 128 positions, the
  chapters' longest context, and the fused kernel beyond and on GPUs; on the Zen 5 machine the
  batched route also leads at 256 and 512 positions, but no other machine has timed those lengths,
  so the switch is at 128. With the batched route the training step reads between 1.17x and 1.24x
  over fourteen runs on that machine (1.18x in the recorded one), against 1.12x with the fused
  kernel. What is left is shared work: the matrix products are the same MKL calls on both sides,
  and neither storing Q, K and V as one matrix (GPT-2's `c_attn`) nor writing the attention output
  straight into the merged-heads layout gains anything measurable.
* **The chapters** train small models on one thread each (one thread fixes the float results, and
  their matrices are too small to gain from more), which leaves a second core idle. So the
  independent runs of an experiment (seeds, arms, draws) go side by side, one forked process per
  core (`lmcourse.parallel.parallel_map`); each computes the bits it computes alone, so the
  notebooks' outputs are the same as with the runs one after another. On the Zen 2 machine, on the
  fast paths, chapter 7 takes 94 s against 130 s with its runs one after another, chapter 9 97 s
  against about 145 s and chapter 10 112 s against about 170 s (the last two sequential figures
  measured with one other single-threaded job running). An experiment's runs go into one call where
  they can: chapter 7 trains chapter 6's GRU beside its three Transformer seeds, and the 19 runs of
  its three ablation experiments together, which keeps it under its 90 s with three seeds in every
  ablation (97 s with those runs in separate calls).

<!-- generated by scripts/performance_page.py from benchmarks/results.json; do not edit by hand -->
"""

WHAT = {
    "gpt_training": ("GPT training", "`lmcourse.gpt.GPT`", "`transformers.GPT2LMHeadModel`",
                     "tokens/s of forward + backward + AdamW step; model FLOP/s utilisation (MFU)"),
    "bert_inference": ("BERT inference", "`lmcourse.bert.BertModel`", "`transformers.BertModel`",
                       "tokens/s, real MiniLM weights, padded batches of 32 news sentences "
                       "(and full 32 x 128 windows); "
                       "outputs equal to 1e-5"),
    "word2vec": ("word2vec", "`lmcourse.word2vec.train_word2vec`", "`gensim.models.Word2Vec`",
                 "words/s, skip-gram with negative sampling, both on 2 threads (the course's compiled "
                 "engine with 2 workers); the details add the course's engines on 1 thread against "
                 "gensim's 2; WordSim-353 Spearman"),
    "wordpiece": ("WordPiece tokenization", "`lmcourse.tokenize.WordPieceTokenizer`",
                  "Rust `tokenizers`, batch API (`encode_batch`)",
                  "words/s on the news corpus (also against the pure-Python "
                  "`transformers.BertTokenizerLegacy`); ids identical to both"),
    "course_runtime": ("Whole course", "every chapter notebook", "(budget)",
                       "seconds to execute each chapter, against a budget scaled by the measured "
                       "matrix-product peak; seconds to build the book; the longest reply lag: the "
                       "longest time a cell's finished reply from the kernel waited in the client that "
                       "runs the notebook before the client took it (near 0 s; more than 5 s means the "
                       "client missed its wake-up, a stall that would otherwise show only as a slow "
                       "chapter)"),
}


#: details that the chapter table shows instead of a bullet
TABLED = ("seconds per chapter", "budget per chapter s")
NO_GPU_YET = """No GPU figure has been measured yet: every figure on this page is from CPUs. On a GPU, the
commands of [Scaling up](scaling.md) are what to run (`python -m lmcourse.scale --device cuda`, under
`torchrun` for more than one GPU); they print the tokens per second they reach.
"""


def _fmt(value) -> str:
    if isinstance(value, dict):   # a dict inside a dict goes in parentheses
        return ", ".join(f"{k}: ({_fmt(v)})" if isinstance(v, dict) else f"{k}: {_fmt(v)}"
                         for k, v in value.items())
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,d}"
    return str(value)


def split_runs(runs: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the runs of the newest code, by machine; every other run, newest first). The newest code is
    the fingerprint of the newest run that recorded one: by date, then by place (a save appends)."""
    if not all(isinstance(r, dict) and {"machine", "results"} <= r.keys() for r in runs):
        raise ValueError("runs: every run needs its machine and its results")
    newest_first = [runs[i] for i in sorted(range(len(runs)), key=lambda i: (runs[i]["machine"]["date"], i),
                                            reverse=True)]
    newest = next((r["fingerprint"] for r in newest_first if r.get("fingerprint")), None)

    def on_newest_code(run: dict) -> bool:
        return newest is not None and run.get("fingerprint") == newest
    return (sorted(filter(on_newest_code, newest_first), key=lambda r: machine_name(r["machine"])),
            [r for r in newest_first if not on_newest_code(r)])


def machine_name(m: dict) -> str:
    """The CPU's name (with its family and model where recorded) and its vector extension."""
    name = f"{m['cpu']}, {m['family']}" if m.get("family") else m["cpu"]
    return f"{name} ({m['simd']})"


def _commit(run: dict) -> str:
    """The commit that ``run`` measured, in words."""
    if not run.get("commit"):
        return "commit not recorded"
    sha, dirty, _ = run["commit"].partition("+")
    return f"commit `{sha[:10]}`" + (" with uncommitted changes" if dirty else "")


def _column(run: dict) -> str:
    return f"{machine_name(run['machine'])}, {_commit(run)}"


def _about(run: dict) -> str:
    m = run["machine"]
    code = f" (code fingerprint `{run['fingerprint']}`)" if run.get("fingerprint") else ""
    return (f"{m['cores']} cores, {m['memory_gib']} GiB of memory, no GPU; Python {m['python']}, "
            f"PyTorch {m['torch']}, {m['threads']} threads. Measured on {m['date']}, {_commit(run)}{code}.\n")


def _cell(value: float, op: str, bound: float, passed: bool) -> str:
    return f"{value:.3g} ({op} {bound:g}): {'met' if passed else 'missed'}"


def _results_table(runs: list[dict]) -> list[str]:
    """Every figure and check, a row each; one column per run: value (target): met or missed."""
    labels, cells = {}, {}
    for i, run in enumerate(runs):
        for r in run["results"]:
            title = WHAT[r["name"]][0]
            if "figure" not in r:   # the benchmark crashed: say so
                labels.setdefault((r["name"], None), (title, "(crashed)"))
                cells[i, r["name"], None] = "crashed"
                continue
            labels[r["name"], None] = (title, r["unit"])
            cells[i, r["name"], None] = _cell(r["figure"], ">=" if r["higher_is_better"] else "<=",
                                              r["target"], r["passed"])
            for name, c in r["checks"].items():
                labels.setdefault((r["name"], name), ("", name.replace("|", "\\|")))  # a bare | ends a cell
                cells[i, r["name"], name] = _cell(c["value"], c["op"], c["bound"], c["passed"])
    out = ["| benchmark | figure | " + " | ".join(_column(run) for run in runs) + " |",
           "| --- | --- | " + " | ".join("---" for _ in runs) + " |"]
    for (name, check_name), (title, label) in labels.items():
        out.append(f"| {title} | {label} | " + " | ".join(cells.get((i, name, check_name), "")
                                                         for i in range(len(runs))) + " |")
    return out + [""]


def _chapter_table(runs: list[dict]) -> list[str]:
    """Seconds per chapter, one column per run that timed the chapters, with each chapter's budget
    and the measured peak that set it where the run recorded them."""
    timed = [(run, r) for run in runs for r in run["results"] if "seconds per chapter" in r.get("details", {})]
    if not timed:
        return []
    chapters = list(dict.fromkeys(k for _, r in timed for k in r["details"]["seconds per chapter"]))

    def cell(r: dict, chapter: str) -> str:
        seconds = r["details"]["seconds per chapter"].get(chapter)
        budget = r["details"].get("budget per chapter s", {}).get(chapter)
        return "" if seconds is None else f"{seconds:.1f}" + (f" (<= {budget:.0f})" if budget else "")
    out = ["| chapter | " + " | ".join(_column(run) for run, _ in timed) + " |",
           "| --- | " + " | ".join("---" for _ in timed) + " |"]
    if any("peak matmul GFLOP/s" in r["details"] for _, r in timed):   # what the budgets were scaled by
        out.append("| measured peak, GFLOP/s | " + " | ".join(_fmt(r["details"].get("peak matmul GFLOP/s", ""))
                                                            for _, r in timed) + " |")
    out += [f"| `{chapter}` | " + " | ".join(cell(r, chapter) for _, r in timed) + " |" for chapter in chapters]
    out.append("| total | " + " | ".join(f"{r['figure']:.1f} (<= {r['target']:.0f})" for _, r in timed) + " |")
    return out + [""]


def _details(run: dict, level: str) -> list[str]:
    """Each benchmark's verdict line and details, under a heading of ``level``."""
    out = []
    for r in run["results"]:
        out += [f"{level} {WHAT[r['name']][0]}\n", f"`{r['line']}`\n"]
        out += [f"* {key}: {_fmt(value)}" for key, value in r.get("details", {}).items() if key not in TABLED]
        out.append("")
    return out


def _newest_section(runs: list[dict]) -> list[str]:
    """The runs of the newest code side by side, then each one's details."""
    out = ["## Runs on the newest code\n"]
    if not runs:
        return out + ["No saved run records the code it measured yet, so every run on this page is under "
                      "History, below; `make bench` on a machine puts its run here.\n"]
    out += [f"These runs measured the same code (fingerprint `{runs[0]['fingerprint']}`), each the latest "
            "`make bench` on its kind of machine. What each benchmark races:\n",
            "| benchmark | course | peer | measured |", "| --- | --- | --- | --- |"]
    names = dict.fromkeys(r["name"] for run in runs for r in run["results"])
    out += [f"| {' | '.join(WHAT[name])} |" for name in names]
    out += ["", "The figures side by side, each with its target and whether it was met (the whole "
                "course's budget depends on the machine's measured peak):\n"]
    out += _results_table(runs)
    if chapter_table := _chapter_table(runs):
        out += ["Seconds per chapter, with each machine's budget:\n"] + chapter_table
    for run in runs:
        out += [f"### {_column(run)}\n", _about(run)] + _details(run, "####")
    return out


def _history_section(runs: list[dict]) -> list[str]:
    """Every other run, one after another, marked as measured on older code."""
    if not runs:
        return []
    out = ["## History\n",
           "These runs measured older code: their figures describe the code of their commit (or of their "
           "date, where no commit was recorded), not the newest code, and each table gives the targets that "
           "run was checked against. A machine's run leaves History when `make bench` runs on it again.\n"]
    for run in runs:
        out += [f"### {machine_name(run['machine'])}: older code, measured on {run['machine']['date']}, "
                f"{_commit(run)}\n", _about(run)]
        out += _results_table([run]) + _details(run, "####") + _chapter_table([run])
    return out


def _gpu_section(path: Path) -> list[str]:
    """The GPU runs recorded in ``path`` if there are any, else where GPU figures come from."""
    out = ["## On a GPU\n"]
    if not path.exists():
        return out + [NO_GPU_YET]
    g = json.loads(path.read_text(encoding="utf-8"))
    main, step_tokens = g["runs"][0], g["batch_size"] * g["context"]
    out.append(f"Measured on an {g['device']} on {g['date']} with PyTorch {g['torch']}, with the training code of "
               f"{_commit(g)}: the course's GPT ({g['config']}; {g['parameters']:,} parameters, "
               f"{g['training_flops_per_token'] / 1e6:.0f} million training FLOPs per token), trained by the Scaling "
               f"up page's single-GPU command, shortened to {main['steps']:,} steps with a save every "
               f"{g['save_every']}, on the shipped articles written out as files:\n")
    out.append(f"```bash\n{g['command']}\n```\n")
    out.append(f"Model FLOP/s utilisation (MFU) is the model's FLOPs per token times tokens/s over the peak "
               f"measured on the same GPU, {g['peak_tflops']:g} TFLOP/s ({g['peak_source']}); against "
               f"{g['datasheet_tflops']:g} TFLOP/s ({g['datasheet_source']}) each MFU would be "
               f"{g['peak_tflops'] / g['datasheet_tflops']:.2f} times as large. Two machines of the same kind ran "
               f"the set-ups, as the table says. Tokens/s leave out each run's first steps (the column "
               f"\"warm-up\"), which include compiling and warming up.\n")
    out += ["| set-up | machine | steps | warm-up | tokens/s | model TFLOP/s | MFU |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    out += [f"| {r['setup']} | {r['machine']} | {r['steps']:,} | {r['warm_up_steps']} | {r['tokens_per_s']:,.0f} | "
            f"{r['model_tflops']:.1f} | {r['mfu']:.3f} |" for r in g["runs"]]
    step_ms = 1000 * step_tokens / main["tokens_per_s"]
    peak_ms = g["training_flops_per_token"] * step_tokens / g["peak_tflops"] / 1e9
    out.append(f"\nA step of the {main['steps']:,}-step run took {step_ms:.1f} ms on average; at the measured peak "
               f"the model's FLOPs would take {peak_ms:.1f} ms. The gap is not the GPU's arithmetic: a model this "
               f"small runs many small kernels, and each step also draws its windows from the token file on the host "
               f"and reads its loss back; the next section times these apart.")
    same = [r for r in g["runs"] if r["machine"] == 2 and r["setup"].startswith("bf16")]
    if len(same) == 2:
        compiled, eager = sorted(same, key=lambda r: "no compile" in r["setup"])
        faster = "faster" if eager["tokens_per_s"] > compiled["tokens_per_s"] else "slower"
        out[-1] += (f" On machine 2, the bf16 run without compiling ({eager['steps'] - eager['warm_up_steps']} timed "
                    f"steps) was {abs(eager['tokens_per_s'] / compiled['tokens_per_s'] - 1):.0%} {faster} than the "
                    f"compiled one ({compiled['steps'] - compiled['warm_up_steps']} timed steps): one short run each, "
                    f"so this says only that compiling gained nothing measurable at this size.")
    out[-1] += "\n"
    ratio = g["tokens_seen"] / g["train_tokens"]
    step, low = g["best_valid"]
    last_step = g["valid_loss_curve"][-1][0]
    turned = step < last_step and g["valid_loss"] > low
    out.append(f"{{numref}}`fig-gpu-loss` shows the loss of the {main['steps']:,}-step run. The shipped articles are "
               f"{g['train_tokens']:,} training tokens at this vocabulary, and the run read {g['tokens_seen']:,}: "
               f"each token about {ratio:.0f} times. "
               + (f"The held-out loss is lowest at step {step} ({low:.3f} nats/token) and then rises while the "
                  f"training loss keeps falling, to {g['train_loss']:.3f} against {g['valid_loss']:.3f} at the end: "
                  f"a model of this size needs far more text than the course ships. " if turned else
                  f"The held-out loss is still falling at the end ({g['valid_loss']:.3f} nats/token). ")
               + f"A unigram model scores {g['unigram_loss']:.3f} on the held-out text.\n")
    curve = (f"falls to {low:.2f} at step {step} and rises to {g['valid_loss']:.2f} by step {last_step:,}" if turned
             else f"falls to {g['valid_loss']:.2f} by step {last_step:,}")
    out += [f"```{{figure}} {g['loss_figure']}", ":name: fig-gpu-loss",
            f":alt: Loss in nats per token against training step for the course's "
            f"{g['parameters'] / 1e6:.1f}-million-parameter GPT on an {g['gpu']}. The training loss falls from about "
            f"{g['train_loss_curve'][0]:.0f} to {g['train_loss']:.2f}; the held-out loss, measured every "
            f"{g['save_every']} steps, {curve}; a dashed line marks the unigram model at {g['unigram_loss']:.2f}.\n",
            f"Training loss (every step) and held-out loss (every {g['save_every']} steps) of the run on the "
            f"{g['gpu']}, with the unigram baseline"
            + (f": after step {step} the model overfits the small corpus." if turned else "."), "```\n"]
    return out


def _gpu_step_section(path: Path) -> list[str]:
    """Where a GPU training step goes (``python -m benchmarks.gpu_step``), if it has been measured."""
    if not path.exists():
        return []
    g = json.loads(path.read_text(encoding="utf-8"))
    run = {(r["loop"], r["compiled"], r["batch"]): r for r in g["runs"]}
    b = g["batch"]
    fit, queued, graphs = run["fit", True, b], run["queued", True, b], run["queued, CUDA graphs", True, b]
    big, big_graphs = run["queued", True, 4 * b], run["queued, CUDA graphs", True, 4 * b]
    out = ["### Where a step goes\n",
           f"Measured on an {g['device']} on {g['date']} with PyTorch {g['torch']}, code of {_commit(g)}, by "
           f"`{g['command']}`: the model and batches of the run above, bf16 autocast, on the same token file; "
           f"{g['steps']} timed steps after {g['warm_up_steps']} warm-up steps each, and the kernels' own time "
           f"summed by PyTorch's profiler over {g['profiled_steps']} more. \"fit\" is the training loop of "
           f"`lmcourse.train.fit` as the scale command runs it (a batch drawn on the host, copied, the loss read "
           f"back every step); \"queued\" has every batch on the GPU already and reads the losses back once at "
           f"the end, so the host can run ahead of the GPU; \"CUDA graphs\" is compiled with "
           f"`mode=\"reduce-overhead\"`, which records the forward and the backward pass as CUDA graphs and replays "
           f"each with one launch, and uses a fused AdamW.\n",
           "| loop | compiled | batch | ms per step | kernels' time, ms per step | kernels per step | tokens/s | MFU |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    out += [f"| {r['loop']} | {'yes' if r['compiled'] else 'no'} | {r['batch']} | {r['ms_per_step']:.1f} | "
            + (f"{r['kernel_ms_per_step']:.1f} | {r['kernels_per_step']} | " if "kernels_per_step" in r
               else "- | - | ")
            + f"{r['tokens_per_s']:,.0f} | {r['mfu']:.3f} |" for r in g["runs"]]
    out.append(f"\nMFU here is against {g['peak_tflops']:.1f} TFLOP/s, the matrix-product peak measured in the same "
               f"run. Drawing a batch of {b} windows from the token file takes {g['host_windows_ms']:.2f} ms on the "
               f"host, and the compiled step as `fit` takes it ({fit['ms_per_step']:.1f} ms) is within "
               f"{abs(fit['ms_per_step'] - queued['ms_per_step']):.1f} ms of the queued one "
               f"({queued['ms_per_step']:.1f} ms): neither the data nor reading the loss back every step is the cost. "
               f"The kernels are busy for {queued['kernel_ms_per_step']:.1f} of those {queued['ms_per_step']:.1f} ms: "
               f"the GPU waits for the host to launch about {queued['kernels_per_step']} kernels a step. Replayed "
               f"as a CUDA graph, the step takes {graphs['ms_per_step']:.1f} ms "
               f"({graphs['tokens_per_s'] / queued['tokens_per_s']:.1f} times the tokens/s). With a batch of "
               f"{4 * b} the kernels fill the step ({big['kernel_ms_per_step']:.1f} of {big['ms_per_step']:.1f} ms) "
               f"and CUDA graphs change little ({big_graphs['ms_per_step']:.1f} ms); MFU reaches "
               f"{max(big['mfu'], big_graphs['mfu']):.2f}. `lmcourse.scale` does not use CUDA graphs: at this "
               f"model size a larger batch (which is also a different optimisation) or a larger model fills the "
               f"GPU.\n")
    return out


def draw_gpu_loss(g: dict, figure: Path) -> None:
    """Draw the loss figure of the GPU run ``g`` (benchmarks/gpu_results.json) into ``figure``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=150)
    train = g["train_loss_curve"]
    ax.plot(range(1, len(train) + 1), train, color="#1f77b4", lw=0.8, label="training loss (each step's batch)")
    steps, valid = zip(*g["valid_loss_curve"])
    ax.plot(steps, valid, "o-", color="#d62728", label="held-out loss")
    ax.axhline(g["unigram_loss"], color="0.4", ls="--", lw=1, label=f"unigram model ({g['unigram_loss']:.2f})")
    ax.set(xlabel="training step", ylabel="loss (nats per token)", ylim=(3, 9.5))
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(figure, metadata={"Software": None})
    plt.close(fig)


def _corpus_section(path: Path) -> list[str]:
    """The measurement of a corpus larger than memory recorded in ``path`` (the Scaling up page explains it)."""
    if not path.exists():
        return []
    r = json.loads(path.read_text(encoding="utf-8"))
    c = r["corpus_1gb"]
    learn, tok, train = c["learn_bpe"], c["tokenize"], c["train"]
    mb = lambda n: n / 1e6  # noqa: E731
    return ["## A corpus larger than memory\n",
            f"Measured on {r['date']} on {r['machine']}, commit `{r['commit']}`, with "
            f"`{c['command']}` on a corpus of {mb(c['bytes']):,.0f} MB in {c['files']} files "
            f"(vocabulary {c['vocab_size']:,}); "
            f"[Scaling up](scaling.md) explains the path from text to batches. Memory is the "
            f"{c['memory']}.\n",
            "| phase | seconds | throughput | peak memory |", "| --- | --- | --- | --- |",
            f"| learning the BPE (Rust) on {mb(c['train_bytes']):,.0f} MB | {learn['seconds']:g} | "
            f"{mb(c['train_bytes']) / learn['seconds']:.1f} MB/s | {learn['peak_pss_mib']} MiB |",
            f"| tokenizing, {tok['workers']} processes | {tok['seconds']:g} | "
            f"{mb(c['bytes']) / tok['seconds']:.1f} MB/s, "
            f"{(tok['train_tokens'] + tok['valid_tokens']) / tok['seconds'] / 1e6:.2f} million tokens/s | "
            f"{tok['peak_pss_mib']} MiB |",
            f"| training {train['steps']} steps from the {mb(tok['train_file_bytes']):,.0f} MB token file | "
            f"{train['seconds']:g} | {train['tokens_per_s_steps_101_to_200']:,} tokens/s | "
            f"{train['anonymous_mib_max_during_training']} MiB |", ""]


def render(root: Path = ROOT) -> str:
    """The Performance page of the results saved under ``root``."""
    runs = json.loads((root / "benchmarks" / "results.json").read_text(encoding="utf-8"))["runs"]
    newest, history = split_runs(runs)
    out = [HEADER] + _newest_section(newest) + _history_section(history)
    out += _corpus_section(root / "benchmarks" / "scale_results.json")
    out += _gpu_section(root / "benchmarks" / "gpu_results.json")
    out += _gpu_step_section(root / "benchmarks" / "gpu_step_results.json")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python scripts/performance_page.py", description=__doc__.split("\n\n")[0])
    parser.parse_args()
    (ROOT / "performance.md").write_text(render(), encoding="utf-8")
    print("wrote performance.md")
    gpu = ROOT / "benchmarks" / "gpu_results.json"
    if gpu.exists():
        record = json.loads(gpu.read_text(encoding="utf-8"))
        figure = ROOT / record["loss_figure"]
        draw_gpu_loss(record, figure)
        print(f"drew {figure.relative_to(ROOT)}")
