"""Cross-encoders versus bi-encoders (Sentence-BERT, Reimers and Gurevych 2019).

A cross-encoder reads both sentences of a pair together ([CLS] a [SEP] b [SEP]): accurate, but
comparing n sentences with each other needs n(n-1)/2 forward passes. A bi-encoder (Sentence-BERT)
encodes each sentence once into a vector (the mean of its token vectors) and compares vectors by
cosine similarity: n forward passes, then n(n-1)/2 cheap dot products.
"""
import torch
import torch.nn.functional as F

from lmcourse.validate import check_int, check_type


def pair_costs(n: int) -> dict[str, int]:
    """Work needed to score all pairs among ``n`` sentences with each design."""
    check_int(n, "n", minimum=1)
    pairs = n * (n - 1) // 2
    return {"pairs": pairs, "cross-encoder forward passes": pairs,
            "bi-encoder forward passes": n, "bi-encoder dot products": pairs}


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors that are not padding: (B, T, C), (B, T) -> (B, C)."""
    check_type(hidden, "hidden", torch.Tensor)
    check_type(attention_mask, "attention_mask", torch.Tensor)
    if hidden.dim() != 3 or attention_mask.shape != hidden.shape[:2]:
        raise ValueError(f"hidden must be (B, T, C) and attention_mask (B, T), got "
                         f"{tuple(hidden.shape)} and {tuple(attention_mask.shape)}")
    weights = attention_mask.to(hidden.dtype).unsqueeze(-1)                 # (B, T, 1)
    summed = (hidden * weights).sum(dim=1)                                  # (B, C)
    return summed / weights.sum(dim=1).clamp(min=1e-9)                      # (B, C) / (B, 1)


def cosine_matrix(a: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """Cosine similarity of every row of a (n, C) with every row of b (m, C): (n, m)."""
    b = a if b is None else b
    if a.dim() != 2 or b.dim() != 2 or a.size(1) != b.size(1):
        raise ValueError(f"a and b must be (n, C) and (m, C), got {tuple(a.shape)} and {tuple(b.shape)}")
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T                # (n, C) @ (C, m) -> (n, m)


#: the sentence-vector poolings :func:`encode` offers
POOLINGS = ("mean", "cls", "max")


@torch.no_grad()
def encode(model, tokenizer, sentences: list[str], batch_size: int = 32, pooling: str = "mean") -> torch.Tensor:
    """Bi-encoder: one forward pass per sentence, pooled: (len(sentences), d_model).

    ``model`` maps tokenizer output to ``last_hidden_state`` (e.g. a Hugging Face ``BertModel``).
    ``pooling``: ``"mean"`` over the non-padding tokens (Sentence-BERT's default and what
    all-MiniLM-L6-v2 was trained with), ``"cls"`` (the first token's vector) or ``"max"``
    (element-wise maximum over the non-padding tokens).
    """
    check_type(sentences, "sentences", list)
    check_int(batch_size, "batch_size", minimum=1)
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(sentences), batch_size):
        batch = tokenizer(sentences[i:i + batch_size], padding=True, truncation=True, return_tensors="pt")
        batch = {k: v.to(device) for k, v in batch.items()}
        hidden = model(**batch).last_hidden_state                          # (B, T, C)
        if pooling == "mean":
            out.append(mean_pool(hidden, batch["attention_mask"]))
        elif pooling == "cls":
            out.append(hidden[:, 0])                                        # (B, C)
        else:
            padding = batch["attention_mask"][..., None] == 0               # (B, T, 1)
            out.append(hidden.masked_fill(padding, float("-inf")).amax(dim=1))
    return torch.cat(out)


@torch.no_grad()
def cross_encode(model, tokenizer, pairs: list[tuple[str, str]], batch_size: int = 32) -> torch.Tensor:
    """Cross-encoder's work: one forward pass per pair ([CLS] a [SEP] b [SEP]); returns the
    [CLS] vectors (len(pairs), d_model), which a trained cross-encoder maps to a score."""
    check_type(pairs, "pairs", list)
    check_int(batch_size, "batch_size", minimum=1)
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(pairs), batch_size):
        a, b = zip(*pairs[i:i + batch_size])
        batch = tokenizer(list(a), list(b), padding=True, truncation=True, return_tensors="pt")
        batch = {k: v.to(device) for k, v in batch.items()}
        out.append(model(**batch).last_hidden_state[:, 0])                 # (B, C)
    return torch.cat(out)
