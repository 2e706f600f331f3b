"""ELMo (Peters et al. 2018): a bidirectional LSTM language model whose layers, mixed with learned
weights, give every token a vector that depends on its sentence.

Two independent LSTM stacks read the sentence, one left to right and one right to left. They share
the token representation (here a word embedding; in the real ELMo a character CNN, correction 21)
and the softmax layer. Each layer j gives token k the vector h_{k,j} = [forward_{k,j}; backward_{k,j}];
layer 0 is the token representation, duplicated to the same width.
"""
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.rnn import Recurrent
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.validate import check_float, check_int, check_nonempty, check_token_ids, check_type


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row of x (B, T, ...) within its first ``lengths[b]`` positions; padding stays at the end."""
    B, T = x.shape[:2]
    if lengths.shape != (B,) or int(lengths.max()) > T or int(lengths.min()) < 1:
        raise ValueError(f"lengths must be (batch,) = ({B},) with values in [1, {T}], got {lengths.tolist()}")
    t = torch.arange(T, device=x.device)[None, :]                     # (1, T)
    index = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)   # (B, T)
    return x.gather(1, index.view(B, T, *[1] * (x.dim() - 2)).expand_as(x))


class BiLM(nn.Module):
    """Two-layer (``num_layers``) bidirectional LSTM language model with shared embedding and softmax.

    forward(ids (B, T), lengths (B,) = full) -> (forward logits, backward logits), each (B, T, V):
    forward logits at k predict token k+1 from tokens 1..k; backward logits at k predict token k-1
    from tokens k..T. layers(ids, lengths) -> (num_layers + 1, B, T, 2 * d_model).
    """

    def __init__(self, vocab_size: int, d_model: int = 64, num_layers: int = 2, fast: bool = True,
                 device=DEFAULT_DEVICE):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(d_model, "d_model", minimum=1)
        check_int(num_layers, "num_layers", minimum=1)
        self.vocab_size, self.d_model, self.num_layers = vocab_size, d_model, num_layers
        self.embedding = nn.Embedding(vocab_size, d_model, device=device)         # shared by both directions
        self.forward_lstm = nn.ModuleList(Recurrent("lstm", d_model, d_model, fast=fast, device=device)
                                          for _ in range(num_layers))
        self.backward_lstm = nn.ModuleList(Recurrent("lstm", d_model, d_model, fast=fast, device=device)
                                           for _ in range(num_layers))
        self.softmax = nn.Linear(d_model, vocab_size, device=device)               # shared by both directions

    def _directions(self, ids: torch.Tensor, lengths: torch.Tensor | None):
        """Token layer (B, T, d) and the per-layer outputs of each direction, in sentence order."""
        check_token_ids(ids, self.vocab_size, "ids")
        if ids.dim() != 2:
            raise ValueError(f"ids must be (batch, time), got shape {tuple(ids.shape)}")
        if lengths is None:
            lengths = torch.full((ids.size(0),), ids.size(1), device=ids.device)
        x = self.embedding(ids)                                  # (B, T) -> (B, T, d)
        fwd, bwd = [], []
        h = x
        for lstm in self.forward_lstm:                           # left to right: padding at the end is harmless
            h, _ = lstm(h)                                       # (B, T, d)
            fwd.append(h)
        h = reverse_padded(x, lengths)                           # right to left, each row within its length
        for lstm in self.backward_lstm:
            h, _ = lstm(h)                                       # (B, T, d)
            bwd.append(reverse_padded(h, lengths))               # back to sentence order
        return x, fwd, bwd

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor | None = None):
        _, fwd, bwd = self._directions(ids, lengths)
        return self.softmax(fwd[-1]), self.softmax(bwd[-1])     # (B, T, d) @ (d, V) -> (B, T, V), twice

    def layers(self, ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Every layer's representation of every token: (num_layers + 1, B, T, 2 * d_model)."""
        x, fwd, bwd = self._directions(ids, lengths)
        # layer 0 at the width of the others, (B, T, 2d): the paper writes h_{k,0} = x_k; the released ELMo
        # code doubles it to [x_k; x_k], as here
        token_layer = torch.cat([x, x], dim=-1)
        return torch.stack([token_layer] + [torch.cat([f, b], dim=-1) for f, b in zip(fwd, bwd)])


def untrained_bilm(bilm: BiLM, seed: int) -> BiLM:
    """A control for pretraining: a new ``BiLM`` of ``bilm``'s shape that keeps a copy of its trained word
    table and draws its LSTMs and softmax afresh after ``torch.manual_seed(seed)``, as they were before
    pretraining. Whatever its layers know beyond the word vectors is owed to reading them in order with
    random weights, not to pretraining the LSTMs."""
    check_type(bilm, "bilm", BiLM)
    check_int(seed, "seed", minimum=0)
    torch.manual_seed(seed)
    fresh = BiLM(bilm.vocab_size, bilm.d_model, bilm.num_layers, device=bilm.embedding.weight.device)
    fresh.embedding.load_state_dict(bilm.embedding.state_dict())
    return fresh


def bilm_loss(model: BiLM, ids: torch.Tensor) -> torch.Tensor:
    """Mean of the forward and backward next-token cross-entropies on full windows ids (B, T)."""
    if ids.dim() != 2 or ids.size(1) < 2:
        raise ValueError(f"ids must be (batch, time >= 2), got shape {tuple(ids.shape)}")
    fwd, bwd = model(ids)                                                    # (B, T, V) each
    V = fwd.size(-1)
    # forward: log p(t_{k+1} | t_1..t_k);  backward: log p(t_{k-1} | t_k..t_T)
    loss_f = F.cross_entropy(fwd[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
    loss_b = F.cross_entropy(bwd[:, 1:].reshape(-1, V), ids[:, :-1].reshape(-1))
    return (loss_f + loss_b) / 2


class ScalarMix(nn.Module):
    """ELMo's task-specific mix of layers: ELMo_k = gamma * sum_j softmax(s)_j h_{k,j}.

    forward(layers (L, ..., D)) -> (..., D). ``s`` starts at zero (equal weights), ``gamma`` at 1.
    ``layer_norm=True`` normalises each layer first (an option in the paper).
    """

    def __init__(self, num_layers: int, layer_norm: bool = False, device=DEFAULT_DEVICE):
        super().__init__()
        check_int(num_layers, "num_layers", minimum=1)
        check_type(layer_norm, "layer_norm", bool)
        self.num_layers, self.layer_norm = num_layers, layer_norm
        self.scalars = nn.Parameter(torch.zeros(num_layers, device=device))   # s_j
        self.gamma = nn.Parameter(torch.ones((), device=device))               # gamma

    def weights(self) -> torch.Tensor:
        """softmax(s): the (num_layers,) layer weights, summing to 1."""
        return self.scalars.softmax(dim=0)

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        if layers.size(0) != self.num_layers:
            raise ValueError(f"layers must stack {self.num_layers} layers on dim 0, got shape {tuple(layers.shape)}")
        if self.layer_norm:
            layers = F.layer_norm(layers, layers.shape[-1:])
        w = self.weights().view(-1, *[1] * (layers.dim() - 1))                 # (L, 1, ..., 1)
        return self.gamma * (w * layers).sum(dim=0)                             # (L, ..., D) -> (..., D)


class TokenTagger(nn.Module):
    """A downstream token classifier on ELMo features: ScalarMix of the biLM's layers, then a small task model.

    ``freeze=True`` is ELMo's feature-based use (the biLM's weights stay fixed; only the mix and the
    head learn); ``freeze=False`` fine-tunes the biLM too. ``layer`` uses that one layer instead of
    the mix (e.g. 0 for the static word vectors); ``layer_norm`` normalises each layer before the mix
    (and before a single ``layer``), so that the mix weights compare layers, not their scales;
    ``with_token_layer=True`` feeds the task model [x_k; ELMo_k], the token layer beside the mix, after
    the paper (where x_k is the task model's own token vector, not the biLM's layer 0). The task model
    on top is a one-hidden-layer MLP of width ``hidden_size`` (a linear layer if ``hidden_size`` is
    None) applied to each token alone, unlike the paper's biLSTM task models, which read the sentence.
    forward(ids (B, T), lengths (B,), layers=None) -> logits (B, T, num_classes); a frozen tagger
    may be given the biLM's ``layers`` (L+1, B, T, 2d), computed once, instead of recomputing them.
    """

    def __init__(self, bilm: BiLM, num_classes: int, freeze: bool = True, layer: int | None = None,
                 hidden_size: int | None = 64, layer_norm: bool = False, with_token_layer: bool = False):
        super().__init__()
        check_type(bilm, "bilm", BiLM)
        check_int(num_classes, "num_classes", minimum=2)
        if layer is not None:
            check_int(layer, "layer", minimum=0, maximum=bilm.num_layers)
        check_type(with_token_layer, "with_token_layer", bool)
        if with_token_layer and layer == 0:
            raise ValueError("with_token_layer=True needs layer != 0 (layer 0 is the token layer)")
        self.bilm, self.freeze, self.layer, self.with_token_layer = bilm, freeze, layer, with_token_layer
        for p in bilm.parameters():
            p.requires_grad_(not freeze)
        device = bilm.softmax.weight.device
        self.mix = ScalarMix(bilm.num_layers + 1, layer_norm=layer_norm, device=device)
        width = 2 * bilm.d_model * (2 if with_token_layer else 1)
        if hidden_size is None:
            self.head = nn.Linear(width, num_classes, device=device)
        else:
            check_int(hidden_size, "hidden_size", minimum=1)
            self.head = nn.Sequential(nn.Linear(width, hidden_size, device=device), nn.ReLU(),
                                      nn.Linear(hidden_size, num_classes, device=device))

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor | None = None,
                layers: torch.Tensor | None = None) -> torch.Tensor:
        if layers is None:
            with torch.set_grad_enabled(torch.is_grad_enabled() and not self.freeze):
                layers = self.bilm.layers(ids, lengths)                          # (L+1, B, T, 2d)
        elif not self.freeze:
            raise ValueError("layers may only be given to a frozen tagger (the biLM must run to be fine-tuned)")
        if self.layer is not None:
            features = layers[self.layer]                                        # (B, T, 2d)
            if self.mix.layer_norm:
                features = F.layer_norm(features, features.shape[-1:])
        else:
            features = self.mix(layers)                                          # (L+1, B, T, 2d) -> (B, T, 2d)
        if self.with_token_layer:                                                # ELMo's [x_k; ELMo_k]
            token = F.layer_norm(layers[0], layers.shape[-1:]) if self.mix.layer_norm else layers[0]
            features = torch.cat([token, features], dim=-1)                      # (B, T, 4d)
        return self.head(features)                                               # (B, T, C)


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """Cosine similarity of two vectors."""
    check_float(float(a.norm() * b.norm()), "norm product", minimum=0.0, strict_minimum=True)
    return float(F.cosine_similarity(a.flatten(), b.flatten(), dim=0))


SENTENCE_END = {".", "!", "?"}


def capitalisation_task(texts: list[str], vocab, chunk: int = 40
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A token-tagging task made from raw text: is this word capitalised mid-sentence?

    The model reads lowercased tokens; the label (1) marks words written with a capital letter that
    do not start a sentence, which in news text are mostly names ("Commonwealth Bank", "Mr Howard").
    Words that are names in one sentence and common words in another need context.
    Texts are cut into pieces of at most ``chunk`` tokens. Returns (ids (N, chunk) padded with
    ``vocab.pad_id``, labels (N, chunk) with -100 on padding, lengths (N,)).
    """
    from lmcourse.tokenize import word_tokenize
    check_int(chunk, "chunk", minimum=2)
    rows, tags = [], []
    for text in texts:
        tokens = word_tokenize(text, lowercase=False)
        labels = [int(tok[0].isupper() and k > 0 and tokens[k - 1] not in SENTENCE_END)
                  for k, tok in enumerate(tokens)]
        ids = vocab.encode([tok.lower() for tok in tokens])
        for start in range(0, len(ids), chunk):
            rows.append(ids[start:start + chunk])
            tags.append(labels[start:start + chunk])
    if not rows:
        raise ValueError("texts must contain at least one token")
    lengths = torch.tensor([len(r) for r in rows])
    ids = torch.full((len(rows), chunk), vocab.pad_id)
    labels = torch.full((len(rows), chunk), -100)
    for n, (r, t) in enumerate(zip(rows, tags)):
        ids[n, :len(r)] = torch.tensor(r)
        labels[n, :len(t)] = torch.tensor(t)
    return ids, labels, lengths


def tagging_loss(model: nn.Module, batch) -> torch.Tensor:
    """Token cross-entropy of a tagger; batch = (ids (B, T), labels (B, T) with -100 ignored,
    lengths (B,)) and optionally the biLM's precomputed layers (L+1, B, T, 2d)."""
    ids, labels, lengths = batch[:3]
    logits = model(ids, lengths, *batch[3:])                                  # (B, T, C)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


@torch.no_grad()
def tagging_scores(model: nn.Module, batch) -> dict[str, float]:
    """Accuracy over real tokens, and precision, recall and F1 of class 1 (batch as in tagging_loss)."""
    ids, labels, lengths = batch[:3]
    was_training = model.training
    model.eval()
    pred = model(ids, lengths, *batch[3:]).argmax(dim=-1)                     # (B, T)
    model.train(was_training)
    real = labels != -100
    p, y = pred[real], labels[real]
    tp = int(((p == 1) & (y == 1)).sum())
    precision = tp / max(int((p == 1).sum()), 1)
    recall = tp / max(int((y == 1).sum()), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"accuracy": float((p == y).float().mean()), "precision": precision, "recall": recall, "f1": f1}


def occurrence_positions(docs: list[list[str]], word: str, half_width: int = 10) -> list[tuple[int, int]]:
    """(document index, token index) of every occurrence that :func:`occurrences` returns, in its order."""
    return [(d, k) for d, tokens in enumerate(docs) for k in range(half_width, len(tokens) - half_width)
            if tokens[k].lower() == word.lower() and tokens[k - 1] not in SENTENCE_END]


def occurrences(docs: list[list[str]], word: str, vocab, half_width: int = 10
                ) -> tuple[torch.Tensor, torch.Tensor, list[list[str]]]:
    """Every occurrence of ``word`` (any case) in the tokenized ``docs`` (original case, e.g.
    ``word_tokenize(text, lowercase=False)``) that does not start a sentence, as a window of lowercased
    token ids with the word at the same place, ``half_width`` tokens from either end (occurrences nearer
    a document's edge are skipped), so that position cannot tell occurrences apart.

    Returns (ids (N, 2 * half_width + 1), capitalised (N,) bool: written with a capital letter,
    the windows' original tokens).
    """
    check_type(word, "word", str)
    check_int(half_width, "half_width", minimum=1)
    check_nonempty(docs, "docs")
    if isinstance(docs[0], str):
        raise TypeError("docs must be lists of tokens, not strings; tokenize them first")
    rows, capital, windows = [], [], []
    for d, k in occurrence_positions(docs, word, half_width):
        window = docs[d][k - half_width:k + half_width + 1]
        rows.append(vocab.encode([t.lower() for t in window]))
        capital.append(docs[d][k][0].isupper())
        windows.append(window)
    if not rows:
        raise ValueError(f"word {word!r} does not occur in docs away from sentence starts and edges")
    return torch.tensor(rows), torch.tensor(capital), windows


class CharCNN(nn.Module):
    """ELMo's kind of token layer, small: characters -> embeddings -> convolutions of several widths,
    max-pooled over the word -> highway layer -> projection. Any string gets a vector.

    forward(char_ids (N, max_chars), 0 = padding) -> (N, out_dim). ``encode(words)`` makes char_ids.
    """

    def __init__(self, out_dim: int, char_dim: int = 16, widths: tuple[int, ...] = (1, 2, 3, 4),
                 filters: int = 32, max_chars: int = 20):
        super().__init__()
        check_int(out_dim, "out_dim", minimum=1)
        check_int(max_chars, "max_chars", minimum=max(widths))
        self.max_chars = max_chars
        self.chars = nn.Embedding(256, char_dim, padding_idx=0)                 # bytes; 0 pads
        self.convs = nn.ModuleList(nn.Conv1d(char_dim, filters, w) for w in widths)
        width = filters * len(widths)
        self.highway = nn.Linear(width, 2 * width)                               # transform and gate
        self.projection = nn.Linear(width, out_dim)

    def encode(self, words: list[str]) -> torch.Tensor:
        """(N, max_chars) byte ids of the words (+1, so 0 is padding), cut at max_chars; bytes 255 share an id."""
        check_nonempty(words, "words")
        ids = torch.zeros(len(words), self.max_chars, dtype=torch.long)
        for n, w in enumerate(words):
            b = list(w.encode("utf-8"))[:self.max_chars]
            ids[n, :len(b)] = torch.tensor([min(c + 1, 255) for c in b], dtype=torch.long)
        return ids

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        x = self.chars(char_ids).transpose(1, 2)                                 # (N, C, char_dim) -> (N, char_dim, C)
        h = torch.cat([conv(x).relu().amax(dim=2) for conv in self.convs], dim=1)   # (N, filters * widths)
        transform, gate = self.highway(h).chunk(2, dim=1)
        gate = gate.sigmoid()
        h = gate * transform.relu() + (1 - gate) * h                             # highway: y = g*f(x) + (1-g)*x
        return self.projection(h)                                                # (N, out_dim)
