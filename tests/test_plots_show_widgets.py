"""Figures, source display and kernel-free sliders (the introduction's timeline: test_history.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from lmcourse.plots import (  # noqa: E402
    plot_attention,
    plot_curves,
    plot_embeddings_2d,
    plot_flagged_tokens,
    plot_heatmap,
    plot_history,
    plot_paired_seeds,
    plot_timeline,
    smooth,
)
from lmcourse.show import CHECKS_LEFT_OUT, show_source, without_checks  # noqa: E402
from lmcourse.tokenize import WordPieceTokenizer  # noqa: E402
from lmcourse.train import History  # noqa: E402
from lmcourse.widgets import static_slider, tokenizer_playground  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_smooth_is_a_running_mean():
    assert np.allclose(smooth([1, 2, 3, 4], 2), [1, 1.5, 2.5, 3.5])
    assert np.allclose(smooth([1, 2], 1), [1, 2])


def test_plot_curves_accepts_values_and_pairs():
    ax = plot_curves({"a": [3, 2, 1], "b": [(10, 1.0), (20, 0.5)]})
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    assert list(ax.get_lines()[1].get_xdata()) == [10, 20]
    with pytest.raises(ValueError, match="curves must not be empty"):
        plot_curves({})


def test_plot_history():
    h = History(train_loss=[3.0, 2.0, 1.0], evals={"valid_loss": [(3, 1.5)], "accuracy": [(3, 0.9)]})
    labels = [line.get_label() for line in plot_history(h, smooth_window=2).get_lines()]
    assert labels == ["train loss", "valid_loss"]


def test_plot_attention_colours_weights_from_0_to_1():
    ax = plot_attention(torch.tensor([[1.0, 0.0], [0.5, 0.5]]), ["k1", "k2"], ["q1", "q2"], title="map")
    image = ax.images[0]
    assert image.get_clim() == (0, 1) and ax.get_title() == "map"
    assert ax.figure.axes[-1].get_ylabel() == "attention weight"
    with pytest.raises(ValueError, match="xlabels"):
        plot_attention(torch.eye(2), ["k1"], ["q1", "q2"])


def test_plot_heatmap_checks_labels():
    ax = plot_heatmap(torch.eye(2), ["a", "b"], ["c", "d"], annotate=True)
    assert len(ax.texts) == 4
    with pytest.raises(ValueError, match="xlabels must have 2 entries"):
        plot_heatmap(np.eye(2), ["a"])
    with pytest.raises(ValueError, match="matrix must be 2-D"):
        plot_heatmap(np.ones(3))


def test_plot_embeddings_2d():
    vecs = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    ax = plot_embeddings_2d(vecs, list("abcde"), groups=[0, 0, 1, 1, 1])
    assert len(ax.texts) == 5
    with pytest.raises(ValueError, match="vectors must be"):
        plot_embeddings_2d(vecs, list("abc"))
    with pytest.raises(ValueError, match="method"):
        plot_embeddings_2d(vecs, list("abcde"), method="tsne")


def test_plot_timeline_stacks_overlapping_labels():
    ax = plot_timeline([(2014.70, "a", "#000000"), (2014.72, "b", "#000000"), (2019.0, "c", "#000000")],
                       xlim=(2014.0, 2020.0), label_width=0.1)
    heights = {t.get_text(): t.get_position()[1] for t in ax.texts if t.get_text() in ("a", "b", "c")}
    assert heights["a"] == heights["c"] < heights["b"]
    with pytest.raises(ValueError, match="events must not be empty"):
        plot_timeline([])


def test_plot_paired_seeds_draws_each_seed_and_the_differences():
    scores = {"a": [0.6, 0.7, 0.65], "b": [0.55, 0.6, 0.62]}
    axes = plot_paired_seeds(scores, {"chance": 0.5}, "AUC", pairs=[("a", "b")])
    assert len(axes) == 2 and [t.get_text() for t in axes[0].get_xticklabels()] == ["a", "b"]
    assert len(axes[0].lines) >= 3 + 2 + 1                     # one grey line per seed, dots per arm, the baseline
    diffs = np.asarray(axes[1].lines[0].get_ydata())
    assert np.allclose(diffs, np.subtract(scores["a"], scores["b"]))
    plt.close("all")
    with pytest.raises(ValueError, match="scores"):
        plot_paired_seeds({"a": [0.6, 0.7], "b": [0.5]})
    with pytest.raises(ValueError, match="pairs"):
        plot_paired_seeds(scores, pairs=[("a", "c")])


def test_plot_flagged_tokens_colours_the_replaced_tokens():
    rows = [{"shown": "a", "original": "a", "replaced": False, "p_replaced": 0.1},
            {"shown": "dog", "original": "cat", "replaced": True, "p_replaced": 0.4}]
    ax = plot_flagged_tokens(rows, threshold=0.5)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "dog\n(cat)"]
    assert [p.get_height() for p in ax.patches[:2]] == [0.1, 0.4]
    assert ax.patches[0].get_facecolor() != ax.patches[1].get_facecolor()
    plt.close("all")
    with pytest.raises(ValueError, match="rows"):
        plot_flagged_tokens([{"shown": "a"}])


def test_show_source_returns_the_code():
    code = show_source(smooth)
    assert code.data.startswith("def smooth(")
    method = show_source(History.last)
    assert method.data.startswith("def last(")  # dedented
    with pytest.raises(TypeError, match="obj must be"):
        show_source(3)


def test_show_source_leaves_out_input_checks_and_says_so():
    source = (
        "def f(x, n):\n"
        "    \"\"\"Doc.\"\"\"\n"
        "    check_int(n, 'n', minimum=1)\n"
        "    if x.dim() != 2:\n"
        "        raise ValueError('x must be 2-d')\n"
        "    y = x * n\n"
        "    for name in ('a', 'b'):\n"
        "        check_name(name)\n"
        "    if y.sum() > 0:\n"
        "        y = -y\n"
        "    return y\n")
    assert without_checks(source).splitlines() == [
        "def f(x, n):", '    """Doc."""', "    " + CHECKS_LEFT_OUT, "    y = x * n",
        "    if y.sum() > 0:", "        y = -y", "    return y"]
    shown = show_source(History.last)
    assert CHECKS_LEFT_OUT not in show_source(smooth, checks=True).data
    assert "raise KeyError" in shown.data or CHECKS_LEFT_OUT in shown.data


def test_static_slider_embeds_every_frame_with_its_alt_text_and_labelled_controls():
    drawn = []

    def draw(fig, value):
        drawn.append(value)
        fig.add_subplot().plot([0, value])

    def describe(value):
        return f"A line rising from 0 to {value}."

    html = static_slider(draw, [1, 2, 3], label="end value", describe=describe, figsize=(2, 2)).data
    assert html.count('src="data:image/png;base64,') == 1 and html.count('"iVBOR') == 3   # shown + 3 frames
    assert 'alt="A line rising from 0 to 1."' in html and "A line rising from 0 to 3." in html
    assert 'aria-label="end value"' in html and 'aria-label="previous frame"' in html
    assert "https://" not in html  # nothing fetched from a CDN: the book works offline
    assert sorted(set(drawn)) == [1, 2, 3]
    assert static_slider(draw, [1, 2, 3], label="end value", describe=describe,
                         figsize=(2, 2)).data == html                     # the same output every run
    with pytest.raises(ValueError, match="values must not be empty"):
        static_slider(draw, [], label="x", describe=describe)
    with pytest.raises(TypeError, match="draw must be callable"):
        static_slider(None, [1], label="x", describe=describe)
    with pytest.raises(TypeError, match="describe must be callable"):
        static_slider(draw, [1], label="x", describe="a line")
    with pytest.raises(ValueError, match="label must be a non-empty string"):
        static_slider(draw, [1], label=" ", describe=describe)
    with pytest.raises(ValueError, match=r"describe\(1\) must return a non-empty alt text"):
        static_slider(draw, [1], label="x", describe=lambda v: "")


def test_heatmap_text_colour_follows_the_colour_scale_not_the_data():
    ax = plot_heatmap(np.full((2, 2), 0.9), annotate=True, vmin=-1, vmax=1)
    assert {t.get_color() for t in ax.texts} == {"black"}       # 0.9 is near the top of -1..1
    ax = plot_heatmap(np.array([[-0.8, 0.8]]), annotate=True, vmin=-1, vmax=1)
    assert [t.get_color() for t in ax.texts] == ["white", "black"]


def test_tokenizer_playground_carries_the_vocabulary_and_shows_the_first_example_cut():
    tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "un", "##aff", "##able", "."])
    page = tokenizer_playground(tok, ["The unaffable.", "zebra"]).data
    assert '<span class="start">un</span><span class="cont">##aff</span><span class="cont">##able</span>' in page
    assert "<output>3 words, 5 pieces, 0 [UNK]</output>" in page            # the, unaffable, .
    assert '"##aff"' in page and page.count("<option") == 2 and 'value="The unaffable."' in page
    assert "</script>" not in page.split('type="application/json">')[1].split("</script>")[0]
    with pytest.raises(ValueError, match="tokenizer"):
        tokenizer_playground(WordPieceTokenizer(tok.itos, lowercase=False), ["x"])
    with pytest.raises(ValueError, match="examples"):
        tokenizer_playground(tok, [])
