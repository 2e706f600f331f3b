"""An RNN encoder-decoder with Bahdanau attention (Bahdanau, Cho and Bengio 2014).

Without attention, the decoder of Sutskever et al. (2014) sees the source only through one
fixed-size vector, the encoder's last state: a bottleneck for long sentences. With attention,
at every output step the decoder scores all encoder states against its own state, and reads
their weighted average (the context vector). The weights form a soft alignment between target
and source words. The recurrent cells are torch's GRU; the attention is written out.
``BahdanauSeq2Seq(..., attention=False)`` is the same model with the bottleneck put back, and
:func:`reversal_pairs` a task whose length can grow, to measure what attention buys.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lmcourse.attention import AdditiveScore, GeneralScore, attend
from lmcourse.validate import check_int, check_token_ids, check_type


class BahdanauSeq2Seq(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with additive attention.

    Encoder: h_j = [forward state; backward state] for every source position j (B, S, 2H).
    Decoder step t: e_tj = v^T tanh(W s_{t-1} + U h_j), alpha_t = softmax(e_t) over real source
    positions, c_t = sum_j alpha_tj h_j, s_t = GRU([emb(y_{t-1}); c_t], s_{t-1}),
    logits_t = Linear([s_t; c_t; emb(y_{t-1})]).
    With ``attention=False`` the context is the same fixed vector at every step, the encoder's
    final states [last forward; first backward] (the encoder-decoder of Cho et al. 2014): the
    decoder sees the source only through that bottleneck. Everything else is unchanged.

    forward(src (B, S), tgt_in (B, T)) -> (logits (B, T, tgt_vocab), weights (B, T, S)).
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_embed: int = 32,
                 d_hidden: int = 64, pad_id: int = 0, attention: bool = True):
        super().__init__()
        check_type(attention, "attention", bool)
        self.attention = attention
        for value, name in ((src_vocab_size, "src_vocab_size"), (tgt_vocab_size, "tgt_vocab_size"),
                            (d_embed, "d_embed"), (d_hidden, "d_hidden")):
            check_int(value, name, minimum=1)
        check_int(pad_id, "pad_id", minimum=0, maximum=min(src_vocab_size, tgt_vocab_size) - 1)
        self.pad_id = pad_id
        self.src_embed = nn.Embedding(src_vocab_size, d_embed, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_embed, padding_idx=pad_id)
        self.encoder = nn.GRU(d_embed, d_hidden, batch_first=True, bidirectional=True)
        self.init_state = nn.Linear(d_hidden, d_hidden)            # s_0 = tanh(W_s h_1^backward)
        self.score = AdditiveScore(d_hidden, 2 * d_hidden, d_hidden)
        self.cell = nn.GRUCell(d_embed + 2 * d_hidden, d_hidden)
        self.out = nn.Linear(d_hidden + 2 * d_hidden + d_embed, tgt_vocab_size)

    def encode(self, src: torch.Tensor):
        """src (B, S) -> (annotations (B, S, 2H), key mask (B, 1, S), initial state (B, H)).

        Without attention the "annotations" are the single summary vector (B, 1, 2H), so the
        decoder's softmax over one position gives weight 1 to it at every step.
        """
        check_token_ids(src, self.src_embed.num_embeddings, "src")
        if src.dim() != 2:
            raise ValueError(f"src must be (batch, time) token ids, got shape {tuple(src.shape)}")
        real = src != self.pad_id                                            # (B, S)
        lengths = real.sum(1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.src_embed(src), lengths, batch_first=True, enforce_sorted=False)
        out, h_n = self.encoder(packed)                                      # h_n (2, B, H)
        h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))   # (B, S, 2H)
        if not self.attention:                       # the bottleneck: one vector for the whole source
            h = torch.cat([h_n[0], h_n[1]], -1)[:, None, :]                 # (B, 1, 2H)
            real = real[:, :1]
        return h, real[:, None, :], torch.tanh(self.init_state(h_n[1]))     # backward final = state at j=1

    def project_keys(self, h: torch.Tensor) -> torch.Tensor:
        """annotations (B, S, 2H) -> U h_j (B, S, H), computed once per source."""
        return self.score.U(h)

    def step(self, y_prev, state, h, mask, projected_keys):
        """One decoder step: y_prev (B,), state (B, H) -> (logits (B, V), new state, weights (B, S))."""
        emb = self.tgt_embed(y_prev)                                                   # (B, E)
        scores = self.score(state[:, None, :], h, projected_keys)                      # (B, 1, S)
        context, weights = attend(scores, h, mask)                                     # (B, 1, 2H), (B, 1, S)
        context = context.squeeze(1)
        state = self.cell(torch.cat([emb, context], -1), state)                        # (B, H)
        logits = self.out(torch.cat([state, context, emb], -1))                        # (B, V)
        return logits, state, weights.squeeze(1)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor):
        check_token_ids(tgt_in, self.tgt_embed.num_embeddings, "tgt_in")
        h, mask, state = self.encode(src)
        uk = self.project_keys(h)                 # keys are projected once, reused at every step
        logits, weights = [], []
        for t in range(tgt_in.size(1)):           # teacher forcing: feed the true previous token
            lt, state, wt = self.step(tgt_in[:, t], state, h, mask, uk)
            logits.append(lt)
            weights.append(wt)
        return torch.stack(logits, 1), torch.stack(weights, 1)   # (B, T, V), (B, T, S)

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, bos_id: int, eos_id: int, max_len: int = 32):
        """From BOS, feed back the argmax until EOS -> (ids (B, <= max_len + 1), weights (B, T, S))."""
        check_int(max_len, "max_len", minimum=1)
        was_training = self.training
        self.eval()
        h, mask, state = self.encode(src)
        uk = self.project_keys(h)
        ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        weights = []
        for _ in range(max_len):
            logits, state, w = self.step(ys[:, -1], state, h, mask, uk)
            nxt = logits.argmax(-1).masked_fill(done, self.pad_id)
            ys = torch.cat([ys, nxt[:, None]], 1)
            weights.append(w)
            done |= nxt == eos_id
            if done.all():
                break
        self.train(was_training)
        return ys, torch.stack(weights, 1)


class LuongSeq2Seq(BahdanauSeq2Seq):
    """The same encoder with Luong, Pham and Manning's (2015) global attention and input feeding.

    Decoder step t: s_t = GRU([emb(y_{t-1}); a_{t-1}], s_{t-1}) (input feeding: the previous
    attentional vector goes in, a_0 = 0); e_tj = s_t^T W_a h_j (the "general" score; the query is
    the new state s_t, not s_{t-1}); alpha_t = softmax(e_t); c_t = sum_j alpha_tj h_j;
    a_t = tanh(W_c [c_t; s_t]) (the attentional vector, Luong's h~_t); logits_t = W_s a_t.
    The state carried from step to step is the pair (s_t, a_t).

    forward(src (B, S), tgt_in (B, T)) -> (logits (B, T, tgt_vocab), weights (B, T, S)).
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_embed: int = 32,
                 d_hidden: int = 64, pad_id: int = 0):
        super().__init__(src_vocab_size, tgt_vocab_size, d_embed, d_hidden, pad_id)
        self.score = GeneralScore(d_hidden, 2 * d_hidden)
        self.cell = nn.GRUCell(d_embed + d_hidden, d_hidden)
        self.combine = nn.Linear(2 * d_hidden + d_hidden, d_hidden, bias=False)   # W_c
        self.out = nn.Linear(d_hidden, tgt_vocab_size)                           # W_s

    def encode(self, src: torch.Tensor):
        """As the Bahdanau model's, with the state (s_0, a_0 = 0)."""
        h, mask, state = super().encode(src)
        return h, mask, (state, torch.zeros_like(state))

    def project_keys(self, h: torch.Tensor) -> torch.Tensor:
        """annotations (B, S, 2H) -> W_a h_j (B, S, H), so that e_tj = s_t . (W_a h_j)."""
        return h @ self.score.W.T

    def step(self, y_prev, state, h, mask, projected_keys):
        """One decoder step: y_prev (B,), state (s (B, H), a (B, H)) -> (logits (B, V), new state, weights (B, S))."""
        s, attentional = state
        s = self.cell(torch.cat([self.tgt_embed(y_prev), attentional], -1), s)        # input feeding
        scores = s[:, None, :] @ projected_keys.transpose(1, 2)                          # (B, 1, S)
        context, weights = attend(scores, h, mask)                                     # (B, 1, 2H)
        attentional = torch.tanh(self.combine(torch.cat([context.squeeze(1), s], -1)))   # (B, H)
        return self.out(attentional), (s, attentional), weights.squeeze(1)


def reversal_pairs(num_pairs: int, lengths, seed: int = 0, num_digits: int = 10):
    """Random digit strings and their reversals, an equal share of each length in ``lengths``.

    Returns (src (N, S), tgt (N, S + 2), length (N,)) as token ids: 0 is padding, 1 BOS, 2 EOS,
    digit d is d + 3; tgt = [BOS, reversed source, EOS], both right-padded with 0.
    """
    check_int(num_pairs, "num_pairs", minimum=1)
    check_int(num_digits, "num_digits", minimum=2)
    lengths = list(lengths)
    if not lengths or any(not isinstance(n, int) or n < 1 for n in lengths):
        raise ValueError(f"lengths must be a non-empty list of positive ints, got {lengths!r}")
    g = torch.Generator().manual_seed(seed)
    length = torch.tensor(lengths)[torch.arange(num_pairs) % len(lengths)]
    longest = max(lengths)
    digits = torch.randint(3, 3 + num_digits, (num_pairs, longest), generator=g)
    positions = torch.arange(longest)
    src = digits.masked_fill(positions >= length[:, None], 0)                         # (N, S)
    flipped = torch.where(positions < length[:, None], (length[:, None] - 1 - positions).clamp(min=0), 0)
    reversed_ = src.gather(1, flipped).masked_fill(positions >= length[:, None], 0)  # (N, S)
    tgt = torch.cat([torch.full((num_pairs, 1), 1), reversed_, torch.zeros(num_pairs, 1, dtype=torch.long)], 1)
    tgt[torch.arange(num_pairs), length + 1] = 2
    return src, tgt, length


def seq2seq_loss(model: BahdanauSeq2Seq, batch) -> torch.Tensor:
    """Teacher-forced cross-entropy of tgt[:, 1:] given tgt[:, :-1]; batch = (src, tgt)."""
    src, tgt = batch
    logits, _ = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1),
                           ignore_index=model.pad_id)


def sequence_correct(model: BahdanauSeq2Seq, src: torch.Tensor, tgt: torch.Tensor,
                     bos_id: int = 1, eos_id: int = 2) -> torch.Tensor:
    """Greedy-decode ``src`` (B, S) and compare with ``tgt`` (B, T) up to EOS -> bool (B,):
    True where the whole output sequence is right (exact match)."""
    if src.dim() != 2 or tgt.dim() != 2 or src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt must be (batch, time) with one batch size, got "
                         f"{tuple(src.shape)} and {tuple(tgt.shape)}")
    ys, _ = model.greedy_decode(src, bos_id, eos_id, max_len=tgt.size(1) - 1)
    ys = F.pad(ys, (0, tgt.size(1) - ys.size(1)), value=model.pad_id)
    return (ys == tgt).all(1)
