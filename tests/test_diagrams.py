"""Every diagram draws, renders to PNG, keeps its text inside the figure and free of overlaps, and
checks its keyword arguments; every public function of a part module is a registered diagram."""
import importlib
import inspect
import io
import itertools
import pkgutil

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lmcourse import diagrams  # noqa: E402
from lmcourse.bert import BertConfig, BertForPreTraining, mask_predict  # noqa: E402
from lmcourse.diagrams import DIAGRAMS  # noqa: E402
from lmcourse.head_study import PAIRS, split_pairs  # noqa: E402

#: non-default settings that change a diagram's layout, drawn as well as the defaults
VARIANTS = [
    ("albert_parameters", {"vocab_size": 50_000, "d_model": 1024, "d_embed": 64, "num_layers": 24}),
    ("transfer", {"layers": 1}),
    ("transfer", {"layers": 3, "image_size": 12, "rates": ("1e-4", "3e-3")}),
    ("layer_transfer_design", {"layers": 3}),
    ("nnlm", {"context_size": 2, "direct": False}),
    ("nnlm", {"context_size": 4}),
    ("sampling_loop", {"order": 2}),
    ("sampling_loop", {"order": 4}),
    ("kneser_ney_chain", {"order": 2}),
    ("kneser_ney_chain", {"order": 4}),
    ("cbow_and_skipgram", {"window": 3}),
    ("huffman_tree", {"word": "blaze"}),
    ("negative_sampling", {"negatives": 1}),
    ("rnn_unrolled", {"steps": 5}),
    ("lstm_cell", {"equations": False}),
    ("stacked_rnn", {"layers": 3}),
    ("bidirectional_rnn", {"focus": 0}),
    ("truncated_bptt", {"window": 2}),
    ("truncated_bptt", {"window": 4}),
    ("elmo", {"focus": 0}),
    ("probe_procedure", {"folds": 3, "partitions": 2}),
    ("probe_procedure", {"folds": 6, "partitions": 9}),
    ("char_cnn_highway", {"word": "zebra9"}),
    ("char_cnn_highway", {"word": "a"}),
    ("memory_task", {"gap": 2}),
    ("elmo_tagger", {"frozen": False}),
    ("seq2seq_attention", {"step": 3}),
    ("attention", {"shapes": False}),
    ("self_attention_flow", {"numbers": False}),
    ("attention_masks", {"size": 3}),
    ("luong_attention", {"shapes": False}),
    ("path_length", {"tokens": 3}),
    ("path_length", {"tokens": 6}),
    ("two_position_model", {"heads": 1}),
    ("two_position_model", {"heads": 4}),
    ("what_each_model_sees", {"position": 1, "matrices": False}),
    ("decoder_only", {"shapes": False}),
    ("gpt_block", {"shapes": False}),
    ("kv_cache", {"step": 3}),
    ("kv_cache", {"step": 4}),
    ("teacher_forcing", {"steps": 2}),
    ("teacher_forcing", {"steps": 3}),
    ("beam_search_tree", {"beam_size": 1}),
    ("layernorm_placement", {"shapes": False}),
    ("relative_position_bias", {"size": 4, "max_offset": 1}),
    ("relative_position_bias", {"size": 7, "max_offset": 6}),
    ("gpt_input_transformations", {"choices": 4}),
    ("wordpiece_segmentation", {"word": "playing"}),
    ("wordpiece_segmentation", {"word": "tokenization"}),
    ("mask_predict_rounds", {"iterations": 1}),
    ("mask_predict_rounds", {"blanks": 2, "iterations": 10}),
    ("mask_predict_rounds", {"blanks": 5, "iterations": 3}),
    ("sliding_windows", {"stride": 40}),
    ("sliding_windows", {"window": 60, "stride": 10}),
    ("sliding_windows", {"window": 30, "stride": 30}),
    ("xlnet_two_streams", {"order": (1, 0, 2), "position": 0}),
    ("xlnet_two_streams", {"order": (4, 3, 2, 1, 0), "position": 0}),
    ("in_context_lookup", {"pairs": ((0, 1),), "query": 0}),
    ("in_context_lookup", {"pairs": tuple((k, k) for k in range(8)), "query": 0}),
]

BAD = [
    ("albert_parameters", {"d_embed": 0}, ValueError, "d_embed"),
    ("albert_parameters", {"num_layers": 2}, ValueError, "num_layers"),
    ("transfer", {"layers": 0}, ValueError, "layers"),
    ("transfer", {"image_size": 1}, ValueError, "image_size"),
    ("transfer", {"rates": 1e-4}, TypeError, "rates"),
    ("framed_task", {"frame": 8}, ValueError, "frame"),
    ("layer_transfer_design", {"layers": 4}, ValueError, "layers"),
    ("nnlm", {"context_size": 1}, ValueError, "context_size"),
    ("nnlm", {"context_size": 2.0}, TypeError, "context_size"),
    ("nnlm", {"direct": "yes"}, TypeError, "direct"),
    ("sampling_loop", {"order": 1}, ValueError, "order"),
    ("kneser_ney_chain", {"order": 5}, ValueError, "order"),
    ("kneser_ney_chain", {"order": 3.0}, TypeError, "order"),
    ("cbow_and_skipgram", {"window": 9}, ValueError, "window"),
    ("huffman_tree", {"word": "river"}, ValueError, "word"),
    ("huffman_tree", {"word": 3}, TypeError, "word"),
    ("negative_sampling", {"negatives": 5}, ValueError, "negatives"),
    ("rnn_unrolled", {"steps": 1}, ValueError, "steps"),
    ("lstm_cell", {"equations": 1}, TypeError, "equations"),
    ("gru_cell", {"equations": None}, TypeError, "equations"),
    ("stacked_rnn", {"layers": 1}, ValueError, "layers"),
    ("stacked_rnn", {"layers": 2.0}, TypeError, "layers"),
    ("bidirectional_rnn", {"focus": 4}, ValueError, "focus"),
    ("truncated_bptt", {"window": 5}, ValueError, "window"),
    ("elmo", {"focus": 4}, ValueError, "focus"),
    ("probe_procedure", {"folds": 7}, ValueError, "folds"),
    ("probe_procedure", {"folds": 5.0}, TypeError, "folds"),
    ("probe_procedure", {"partitions": 1}, ValueError, "partitions"),
    ("char_cnn_highway", {"word": "naïve"}, ValueError, "word"),
    ("char_cnn_highway", {"word": "giraffe"}, ValueError, "word"),
    ("char_cnn_highway", {"word": 3}, TypeError, "word"),
    ("memory_task", {"gap": 5}, ValueError, "gap"),
    ("elmo_tagger", {"frozen": 1}, TypeError, "frozen"),
    ("seq2seq_attention", {"step": True}, TypeError, "step"),
    ("attention", {"shapes": "no"}, TypeError, "shapes"),
    ("self_attention_flow", {"numbers": 1}, TypeError, "numbers"),
    ("attention_masks", {"size": 5}, ValueError, "size"),
    ("luong_attention", {"shapes": "no"}, TypeError, "shapes"),
    ("path_length", {"tokens": 7}, ValueError, "tokens"),
    ("path_length", {"tokens": 4.0}, TypeError, "tokens"),
    ("two_position_model", {"heads": 5}, ValueError, "heads"),
    ("two_position_model", {"heads": 2.0}, TypeError, "heads"),
    ("transformer_layers", {"shapes": 0}, TypeError, "shapes"),
    ("transformer_model", {"shapes": "yes"}, TypeError, "shapes"),
    ("teacher_forcing", {"steps": 1}, ValueError, "steps"),
    ("teacher_forcing", {"steps": 5}, ValueError, "steps"),
    ("beam_search_tree", {"beam_size": 3}, ValueError, "beam_size"),
    ("layernorm_placement", {"shapes": 1}, TypeError, "shapes"),
    ("relative_position_bias", {"size": 8}, ValueError, "size"),
    ("relative_position_bias", {"max_offset": 6}, ValueError, "max_offset"),
    ("what_each_model_sees", {"position": 0}, ValueError, "position"),
    ("decoder_only", {"shapes": 1}, TypeError, "shapes"),
    ("gpt_block", {"shapes": "yes"}, TypeError, "shapes"),
    ("kv_cache", {"step": 2}, ValueError, "step"),
    ("kv_cache", {"step": 6}, ValueError, "step"),
    ("kv_cache", {"step": 4.0}, TypeError, "step"),
    ("what_each_model_sees", {"matrices": "all"}, TypeError, "matrices"),
    ("gpt_input_transformations", {"choices": 1}, ValueError, "choices"),
    ("wordpiece_segmentation", {"word": "Unaffable"}, ValueError, "word"),
    ("wordpiece_segmentation", {"word": "embeddings"}, ValueError, "word"),
    ("wordpiece_segmentation", {"word": 3}, TypeError, "word"),
    ("mask_predict_rounds", {"blanks": 1}, ValueError, "blanks"),
    ("mask_predict_rounds", {"blanks": 9}, ValueError, "blanks"),
    ("mask_predict_rounds", {"blanks": 8.0}, TypeError, "blanks"),
    ("mask_predict_rounds", {"iterations": 0}, ValueError, "iterations"),
    ("mask_predict_rounds", {"iterations": 11}, ValueError, "iterations"),
    ("mask_predict_rounds", {"iterations": True}, TypeError, "iterations"),
    ("sliding_windows", {"window": 20}, ValueError, "window"),
    ("sliding_windows", {"stride": 50}, ValueError, "stride"),
    ("sliding_windows", {"window": 60, "stride": 5}, ValueError, "stride"),
    ("xlnet_two_streams", {"order": (0, 0, 1)}, ValueError, "order"),
    ("xlnet_two_streams", {"position": 4}, ValueError, "position"),
    ("in_context_lookup", {"query": 9}, ValueError, "query"),
    ("in_context_lookup", {"pairs": ((1, 2), (1, 3)), "query": 1}, ValueError, "query"),
    ("in_context_lookup", {"pairs": ()}, ValueError, "pairs"),
]


def check_figure(fig: Figure, render: bool = True) -> None:
    """A figure with text, all of it inside the figure and no two labels overlapping; ``render``:
    it also renders to PNG (text extents need no rendering, so variants skip the slow part)."""
    assert isinstance(fig, Figure)
    assert fig.axes
    if render:
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=100)   # draws the figure
        assert png.getvalue().startswith(b"\x89PNG")
    renderer = fig.canvas.get_renderer()
    texts = [t for ax in fig.axes for t in ax.texts] + list(fig.texts)
    labels = [(t.get_text(), t.get_window_extent(renderer)) for t in texts
              if t.get_visible() and t.get_text().strip()]
    assert labels, "a diagram without any text"
    page = fig.bbox
    for text, box in labels:
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, f"{text!r} runs off the side"
        assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, f"{text!r} runs off the top or bottom"
    for (a, box_a), (b, box_b) in itertools.combinations(labels, 2):
        overlap = (min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > 1
                   and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > 1)
        assert not overlap, f"labels {a!r} and {b!r} overlap"


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_diagram_draws_cleanly(name):
    fig = DIAGRAMS[name]()
    try:
        check_figure(fig)
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("name", "kwargs"), VARIANTS, ids=[f"{n}-{k}" for n, k in VARIANTS])
def test_diagram_variant_draws_cleanly(name, kwargs):
    fig = DIAGRAMS[name](**kwargs)
    try:
        check_figure(fig, render=False)
    finally:
        plt.close(fig)


def test_registry_holds_the_public_functions():
    for name, function in DIAGRAMS.items():
        assert getattr(diagrams, name) is function
        assert function.__doc__


def test_every_public_function_of_a_part_module_is_registered():
    parts = [m.name for m in pkgutil.iter_modules(diagrams.__path__) if not m.name.startswith("_")]
    assert not set(parts) & set(DIAGRAMS), "a diagram named like a part module would hide the module"
    for part in parts:
        module = importlib.import_module(f"lmcourse.diagrams.{part}")
        for name, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_"):
                assert DIAGRAMS.get(name) is value, (
                    f"{module.__name__}.{name} is not in DIAGRAMS: decorate it with @diagram, list its "
                    "module in lmcourse/diagrams/__init__.py, and give no two diagrams the same name")


@pytest.mark.parametrize(("name", "kwargs", "error", "argument"), BAD,
                         ids=[f"{n}-{k}" for n, k, *_ in BAD])
def test_bad_keyword_arguments_are_rejected(name, kwargs, error, argument):
    with pytest.raises(error, match=argument):
        DIAGRAMS[name](**kwargs)


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_unknown_keyword_argument_is_a_type_error(name):
    with pytest.raises(TypeError):
        DIAGRAMS[name](colour="red")


def test_bpe_merges_draws_the_merges_the_trainer_learns():
    fig = DIAGRAMS["bpe_merges"]()
    try:
        texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    finally:
        plt.close(fig)
    # Sennrich et al.'s table without the end-of-word marker: e s (9, tied with s t), es t (9), l o (7, tied with o w)
    assert {"merge 1: e + s → es", "merge 2: es + t → est", "merge 3: l + o → lo"} <= texts
    assert "vocabulary: 256 bytes\n+ 3 merges = 259 ids" in texts


@pytest.mark.parametrize("folds", [3, 5])
def test_probe_procedure_draws_its_folds_and_partitions(folds):
    fig = DIAGRAMS["probe_procedure"](folds=folds, partitions=4)
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    assert texts.count("test") == folds                    # one test fold per round, each fold tested once
    assert [t for t in texts if t.startswith("round ")] == [f"round {r + 1}" for r in range(folds)]
    assert f"× {folds} rounds" in texts and any(f"acc_B: ({folds},)" in t for t in texts)
    assert any("'ahead on k of 4'" in t for t in texts)
    # the verdicts are robust_verdict's four, and the changes it tries are those of up to two occurrences
    assert sum(t.split(":")[0] in ("ahead", "within", "behind") for t in texts) == 3
    assert any(t.endswith("unresolved") for t in texts) and any("change of up to\n2 occurrences" in t for t in texts)


@pytest.mark.parametrize(("blanks", "iterations"), [(8, 8), (5, 3), (2, 10), (3, 1)])
def test_mask_predict_rounds_draws_the_schedule_of_mask_predict(blanks, iterations):
    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(vocab_size=20, d_model=8, num_layers=1, num_heads=2, d_ff=16, max_len=16,
                                          dropout=0.0), device="cpu").eval()
    mask_id, masked = 4, []                                 # the [MASK]s of every forward pass mask_predict makes
    with torch.no_grad():
        model.mlm_decoder.bias[mask_id] = -1e4              # so that no guess is itself a [MASK]
    model.register_forward_pre_hook(lambda module, args: masked.append(int((args[0] == mask_id).sum())))
    ids = torch.tensor([2, 5, 6, 7] + [mask_id] * blanks + [3])
    mask_predict(model, ids, list(range(4, 4 + blanks)), mask_id, iterations)
    fig = DIAGRAMS["mask_predict_rounds"](blanks=blanks, iterations=iterations)
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    counts = [t.removeprefix("guesses ").split(", re-masks ") for t in texts if t.startswith("guesses ")]
    assert [int(g) for g, _ in counts] == masked           # each round guesses the blanks its input masks
    assert [int(n) for _, n in counts] == masked[1:] + [0]  # and re-masks those the next round guesses


def test_head_study_design_draws_the_study_of_the_module():
    fig = DIAGRAMS["head_study_design"]()
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    choose, held_out = split_pairs(len(PAIRS))
    assert f"{len(PAIRS)} pairs" in texts
    assert f"choosing half: {len(choose)} pairs" in texts and f"held-out half: {len(held_out)} pairs" in texts
    # the sentence of the first pair as MiniLM cuts it: 15 pieces, so 12 rows besides 'it' and the two nouns
    assert any(t.startswith("the rows of the other 12 tokens") for t in texts)
    assert {"too tired: it = the animal", "too wide: it = the street"} <= set(texts)


def test_albert_parameters_writes_the_calculators_counts():
    from lmcourse.albert import EncoderConfig, encoder_parameters
    fig = DIAGRAMS["albert_parameters"](vocab_size=1000, d_model=64, d_embed=16, num_layers=4)
    try:
        texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    finally:
        plt.close(fig)
    bert = encoder_parameters(EncoderConfig(vocab_size=1000, d_model=64, num_layers=4, d_ff=256))
    albert = encoder_parameters(EncoderConfig(vocab_size=1000, d_model=64, num_layers=4, d_ff=256, d_embed=16,
                                              sharing="all"))
    assert f"{1000 * 64:,} parameters" in texts                                 # V x H
    assert f"{1000 * 16 + 16 * 64 + 64:,} parameters" in texts                  # V x E, then E x H with its bias
    for parts in (bert, albert):
        layers = parts["attention (all layers)"] + parts["feed-forward (all layers)"]
        assert f"layer weights: {layers:,}" in texts
    assert bert["attention (all layers)"] == 4 * albert["attention (all layers)"]   # 4 layers against 1 shared


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell"])
def test_recurrent_cells_write_their_tensor_shapes(name):
    fig = DIAGRAMS[name]()
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    assert texts.count("(B, H)") >= 2 and "(B, I)" in texts             # the states in and out, the input
    assert any("(B, H + I)" in t for t in texts) and any("(H + I, H) → (B, H)" in t for t in texts)


@pytest.mark.parametrize("heads", [1, 2, 4])
def test_two_position_model_writes_the_shapes_of_the_model(heads):
    from lmcourse.multihead_task import TwoPositionModel
    model = TwoPositionModel(10, 16, 32, heads)
    logits, weights = model(torch.zeros(3, 16, dtype=torch.long), need_weights=True)
    fig = DIAGRAMS["two_position_model"](heads=heads)
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    # the drawn shapes are the module's: weights (B, h, T, T), logits (B, T, K), d_hidden between them
    assert tuple(weights.shape) == (3, heads, 16, 16) and f"(B, {heads}, T, T)" in texts
    assert tuple(logits.shape) == (3, 16, 10) and "(B, T, K)" in texts
    assert model.hidden.out_features == 64 and any("d_hidden = 64" in t for t in texts)
