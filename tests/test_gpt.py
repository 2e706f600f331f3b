"""GPT: shapes, causality, parity with transformers' GPT-2, generation, GPT-1 task heads."""
import pytest
import torch

from lmcourse.exercises import check
from lmcourse.gpt import (
    GPT,
    GPTConfig,
    GPTForTask,
    TaskTokens,
    classification_input,
    complete,
    entailment_input,
    lm_loss,
    loss_by_position,
    multiple_choice_inputs,
    sequence_log_probs,
    similarity_inputs,
    sliding_window_loss,
    task_batch,
    task_loss,
    transfer_layers,
)
from lmcourse.sampling import sample_next

TOL = 1e-5  # float32 parity with transformers


pytestmark = pytest.mark.usefixtures("one_thread")


def small(**kw):
    cfg = dict(vocab_size=50, context_size=16, d_model=32, num_layers=2, num_heads=4)
    cfg.update(kw)
    torch.manual_seed(0)
    return GPT(GPTConfig(**cfg)).eval()


def test_config_validation():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        GPTConfig(d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="vocab_size must be >= 1"):
        GPTConfig(vocab_size=0)
    with pytest.raises(ValueError, match="dropout must be <= 1"):
        GPTConfig(dropout=1.5)
    assert GPTConfig(d_model=64, num_heads=4).d_ff == 256


def test_shapes_tying_and_parameter_count():
    model = small()
    assert model(torch.zeros(3, 7, dtype=torch.long)).shape == (3, 7, 50)
    assert model.lm_head.weight is model.wte.weight
    n = sum(p.numel() for p in model.parameters())
    per_block = 4 * (32 * 32 + 32) + 2 * 2 * 32 + (32 * 128 + 128) + (128 * 32 + 32)
    assert n == 50 * 32 + 16 * 32 + 2 * per_block + 2 * 32
    assert check("ch08-gpt-parameters",
                 lambda V, T, d, L: V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d).endswith("4 checks passed")


def test_causal_future_tokens_do_not_change_past_logits():
    model = small()
    x = torch.randint(0, 50, (2, 10))
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 50
    with torch.no_grad():
        a, b = model(x), model(y)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6)
    assert not torch.allclose(a[:, 6:], b[:, 6:], atol=1e-3)


def test_fused_and_explicit_attention_agree():
    model = small()
    x = model.drop(model.wte(torch.randint(0, 50, (2, 9)))).detach().requires_grad_()
    attn = model.blocks[0].attn
    fused = attn(x)
    explicit, weights = attn(x, need_weights=True)
    assert torch.allclose(fused, explicit, atol=1e-6)
    fused_grad, = torch.autograd.grad(fused.square().sum(), x)
    explicit_grad, = torch.autograd.grad(explicit.square().sum(), x)
    assert torch.allclose(fused_grad, explicit_grad, atol=1e-6)
    assert torch.equal(weights[0, 0].triu(1), torch.zeros(9, 9))       # nothing attends ahead
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 9))


def test_bad_inputs():
    model = small()
    with pytest.raises(ValueError, match="context_size is 16"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(TypeError, match="int64"):
        model(torch.zeros(1, 4))
    prompt = torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="context_size is 16"):
        model.generate(torch.zeros(1, 20, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        model.generate(prompt, 2, temperature=0.0)
    with pytest.raises(ValueError, match="top_p must be > 0"):
        model.generate(prompt, 2, top_p=0.0)
    with pytest.raises(ValueError, match="top_p must be <= 1"):
        model.generate(prompt, 2, top_p=1.5)
    with pytest.raises(ValueError, match="at least one token"):
        model.generate(torch.zeros(1, 0, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="config.json is missing"):
        GPT.from_pretrained("/nonexistent")


def _random_hf_gpt2(tmp_path, **kw):
    transformers = pytest.importorskip("transformers")
    cfg = dict(n_layer=2, n_head=4, n_embd=32, n_positions=24, vocab_size=61,
               attn_implementation="eager", bos_token_id=None, eos_token_id=None, pad_token_id=None)
    cfg.update(kw)
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(**cfg)).eval()
    with torch.no_grad():   # HF initialises biases to 0 and LayerNorms to 1: randomise everything
        for p in hf.parameters():
            p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(tmp_path)
    return hf


def test_from_pretrained_matches_transformers_gpt2(tmp_path):
    hf = _random_hf_gpt2(tmp_path)
    ours = GPT.from_pretrained(tmp_path).eval()
    x = torch.randint(0, 61, (3, 24))
    with torch.no_grad():
        out = hf(x, output_hidden_states=True)
        expected, got = out.logits, ours(x)
        hidden_gap = (out.hidden_states[-1] - ours.hidden_states(x)).abs().max().item()   # after the final LayerNorm
    assert (expected - got).abs().max().item() < TOL
    assert hidden_gap < TOL
    assert ours.lm_head.weight is ours.wte.weight


def test_greedy_generation_matches_transformers(tmp_path):
    hf = _random_hf_gpt2(tmp_path)
    ours = GPT.from_pretrained(tmp_path).eval()
    prompt = torch.tensor([[3, 14, 15, 9]])
    expected = hf.generate(prompt, max_new_tokens=12, do_sample=False,
                           attention_mask=torch.ones_like(prompt))
    assert torch.equal(ours.generate(prompt, 12, greedy=True), expected)


def test_seeded_sampling_is_reproducible_and_uses_sample_next():
    model = small()
    prompt = torch.tensor([[1, 2, 3]])
    out = model.generate(prompt, 25, temperature=0.8, top_k=10, top_p=0.9,
                         generator=torch.Generator().manual_seed(7))
    again = model.generate(prompt, 25, temperature=0.8, top_k=10, top_p=0.9,
                           generator=torch.Generator().manual_seed(7))
    assert torch.equal(out, again) and out.shape == (1, 28)
    g, ids = torch.Generator().manual_seed(7), prompt
    with torch.no_grad():
        for _ in range(25):   # the same loop written out, window sliding past context_size=16
            nxt = sample_next(model(ids[:, -16:])[:, -1], 0.8, 10, 0.9, generator=g)
            ids = torch.cat([ids, nxt[:, None]], 1)
    assert torch.equal(out, ids)


def test_complete_with_a_tokenizer():
    from lmcourse.bpe import BPETokenizer
    tok = BPETokenizer([])
    model = small(vocab_size=len(tok))
    text = complete(model, tok, "ab", 5, greedy=True)
    assert isinstance(text, str)
    with pytest.raises(ValueError, match="prompt must not be empty"):
        complete(model, tok, "", 5)


def test_training_lowers_the_loss():
    model = small().train()
    x = torch.randint(0, 50, (4, 17))
    batch = (x[:, :-1], x[:, 1:])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = lm_loss(model, batch).item()
    for _ in range(40):
        loss = lm_loss(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert first > 3.5 and loss.item() < 1.0


TOKENS = TaskTokens(start=47, delim=48, extract=49)


def test_input_transformations():
    assert classification_input([5, 6], TOKENS) == [[47, 5, 6, 49]]
    assert entailment_input([5], [6, 7], TOKENS) == [[47, 5, 48, 6, 7, 49]]
    assert similarity_inputs([5], [6], TOKENS) == [[47, 5, 48, 6, 49], [47, 6, 48, 5, 49]]
    assert multiple_choice_inputs([5], [[6], [7, 8]], TOKENS) == [[47, 5, 48, 6, 49], [47, 5, 48, 7, 8, 49]]
    ids, last = task_batch([classification_input([5, 6], TOKENS), classification_input([5], TOKENS)], pad_id=0)
    assert ids.tolist() == [[[47, 5, 6, 49]], [[47, 5, 49, 0]]] and last.tolist() == [[3], [2]]
    with pytest.raises(ValueError, match="same, non-zero number"):
        task_batch([[[1]], [[1], [2]]], pad_id=0)


@pytest.mark.parametrize("task,make,shape", [
    ("classification", lambda: classification_input([5, 6, 7], TOKENS), (2, 3)),
    ("entailment", lambda: entailment_input([5], [6, 7], TOKENS), (2, 3)),
    ("similarity", lambda: similarity_inputs([5], [6, 7], TOKENS), (2, 3)),
    ("multiple_choice", lambda: multiple_choice_inputs([5], [[6], [7], [8, 9]], TOKENS), (2, 3)),
])
def test_task_heads(task, make, shape):
    model = GPTForTask(small(), task, num_classes=3)
    ids, last = task_batch([make(), make()], pad_id=0)
    logits, lm_logits = model(ids, last)
    assert logits.shape == shape and lm_logits.shape == (*ids.shape, 50)
    labels = torch.tensor([0, 2])
    loss = task_loss(model, (ids, last, labels))
    # right padding changes nothing: causal attention never looks at the pads after the extract token
    padded = torch.cat([ids, torch.zeros(*ids.shape[:2], 3, dtype=torch.long)], dim=-1)
    assert torch.allclose(task_loss(model, (padded, last, labels)), loss, atol=1e-6)
    assert task_loss(model, (ids, last, labels), lm_weight=0.0) < loss


def test_similarity_is_symmetric_and_task_errors():
    model = GPTForTask(small(), "similarity")
    ab, _ = task_batch([similarity_inputs([5], [6, 7], TOKENS)], pad_id=0)
    ba, last = task_batch([similarity_inputs([6, 7], [5], TOKENS)], pad_id=0)
    assert torch.allclose(model(ab, last)[0], model(ba, last.flip(-1))[0], atol=1e-6)
    with pytest.raises(ValueError, match="task must be one of"):
        GPTForTask(small(), "translation")
    with pytest.raises(ValueError, match="one sequence per example"):
        GPTForTask(small(), "classification")(ab, last)


def test_exercise_checkers_reject_wrong_answers():
    with pytest.raises(AssertionError, match="tied output layer once"):
        check("ch08-gpt-parameters", lambda V, T, d, L: 2 * V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d)


def test_kv_cache_gives_the_same_logits_in_pieces():
    model = small()
    x = torch.randint(0, 50, (2, 12))
    with torch.no_grad():
        full = model(x)
        first, cache = model.forward_cached(x[:, :5])
        one, cache = model.forward_cached(x[:, 5:6], cache)
        rest, cache = model.forward_cached(x[:, 6:], cache)
    assert (torch.cat([first, one, rest], 1) - full).abs().max().item() < 1e-5
    assert len(cache) == 2 and cache[0][0].shape == (2, 4, 12, 8)
    with pytest.raises(ValueError, match="exceed context_size"):
        model.forward_cached(torch.zeros(2, 5, dtype=torch.long), cache)


@pytest.mark.parametrize("sampling", [dict(greedy=True), dict(temperature=0.9, top_k=20)])
def test_cached_generation_equals_uncached_past_the_context(sampling):
    model = small()                     # context 16: 30 new tokens make the window slide
    prompt = torch.randint(0, 50, (2, 4))
    runs = [model.generate(prompt, 30, generator=torch.Generator().manual_seed(3), use_cache=c, **sampling)
            for c in (False, True)]
    assert torch.equal(*runs)
    with pytest.raises(TypeError, match="use_cache must be bool"):
        model.generate(prompt, 2, use_cache=1)


def test_attention_maps_are_causal_distributions():
    model = small()
    maps = model.attention_maps(torch.randint(0, 50, (2, 7)))
    assert maps.shape == (2, 2, 4, 7, 7)
    assert torch.allclose(maps.sum(-1), torch.ones(2, 2, 4, 7), atol=1e-6)
    assert maps.triu(1).abs().max() == 0


def test_sequence_log_probs_matches_the_lm_loss_and_ignores_padding():
    model = small()
    x = torch.randint(0, 50, (3, 9))
    with torch.no_grad():
        total = sequence_log_probs(model, x, torch.tensor([9, 9, 9]))
        loss = lm_loss(model, (x[:, :-1], x[:, 1:]))
        padded = torch.cat([x[:1, :5], torch.full((1, 4), 7)], 1)
        short = sequence_log_probs(model, padded, torch.tensor([5]))
        alone = sequence_log_probs(model, x[:1, :5], torch.tensor([5]))
    assert torch.allclose(-total.sum() / (3 * 8), loss, atol=1e-5)
    assert torch.allclose(short, alone, atol=1e-5)
    with pytest.raises(ValueError, match="lengths must lie in"):
        sequence_log_probs(model, x, torch.tensor([1, 9, 9]))


def test_transfer_layers_copies_the_lower_blocks_only():
    pretrained = small()
    torch.manual_seed(1)
    model = transfer_layers(pretrained, 1)
    ours, theirs = model.state_dict(), pretrained.state_dict()
    for name in theirs:
        same = torch.equal(ours[name], theirs[name])
        if name.startswith("blocks.1.") and name.endswith("weight") and "ln" not in name:
            assert not same, name
        elif not name.startswith("blocks.1."):
            assert same, name
    assert model.lm_head.weight is model.wte.weight
    with pytest.raises(ValueError, match="num_blocks must be <= 2"):
        transfer_layers(pretrained, 3)


def test_loss_by_position_averages_each_position_over_the_batches():
    model = small()
    x = torch.randint(0, 50, (2, 5, 17))
    batches = [(w[:, :-1], w[:, 1:]) for w in x]
    by_position = loss_by_position(model, batches)
    assert by_position.shape == (16,)
    assert torch.allclose(by_position.mean(), torch.stack([lm_loss(model, b) for b in batches]).mean(), atol=1e-5)
    with torch.no_grad():
        last = torch.cat([torch.nn.functional.cross_entropy(model(a)[:, -1], b[:, -1], reduction="none")
                          for a, b in batches])
    assert torch.allclose(by_position[-1], last.mean(), atol=1e-5)
    with pytest.raises(ValueError, match="one window length"):
        loss_by_position(model, [batches[0], (x[0, :, :9], x[0, :, 1:10])])


def test_sliding_window_loss_scores_every_token_once_with_the_longest_context():
    model = small(context_size=8)
    ids = torch.randint(0, 50, (8 * 4 + 1,))
    with torch.no_grad():
        disjoint = lm_loss(model, (ids[:-1].view(4, 8), ids[1:].view(4, 8))).item()
        # stride 1, brute force: target j is predicted from the (at most 8) tokens before it
        brute = [torch.nn.functional.cross_entropy(model(ids[None, max(0, j - 8):j])[0, -1:], ids[j:j + 1]).item()
                 for j in range(1, len(ids))]
    assert sliding_window_loss(model, ids, stride=8) == pytest.approx(disjoint, abs=1e-5)
    assert sliding_window_loss(model, ids, stride=1, batch_size=3) == pytest.approx(sum(brute) / len(brute), abs=1e-5)
    with pytest.raises(ValueError, match="stride must be <= 8"):
        sliding_window_loss(model, ids, stride=9)
    with pytest.raises(ValueError, match="at least context_size"):
        sliding_window_loss(model, ids[:8], stride=4)
