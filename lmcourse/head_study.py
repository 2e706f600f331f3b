"""Which attention heads link a pronoun to its antecedent? A controlled head study in the manner of
Clark et al. (2019, "What does BERT look at?").

The data are minimal pairs: two sentences that differ in one adjective, which flips the noun that
*it* refers to ("the animal didn't cross the street because it was too tired / too wide"). For every
head and sentence these numbers are read from the attention weights (a noun split into word pieces
counts the sum of its pieces' columns):

- the **pronoun preference**: the weight from *it* to its antecedent minus its weight to the other noun;
- the **column control**: the same difference, averaged over the rows of the other tokens (all but
  *it* and the two nouns). A head that lights a noun's whole column ("a column head") scores as
  high here as on the pronoun's row; only a head whose *it* row differs from the other rows links
  the pronoun itself;
- the **excess**: preference minus control;
- the weight from *it* to the two nouns together, and the same for the other rows: a head that
  links the pronoun to nouns at all gives them more from the *it* row than from the others.

Each noun is the antecedent in one sentence of its pair and the distractor in the other, so a head
that always prefers the first (or the nearer) noun scores zero on average. The pair, not the
sentence, is the unit of the statistics: the two sentences are averaged first, then means and
standard errors are taken over pairs. A head *flips* on a pair when it gives the antecedent more
weight than the distractor in both sentences, that is when its choice follows the adjective; a
head that ignores the adjective flips on no pair, and a coin would flip on a quarter of them.
"""
from dataclasses import dataclass
from typing import NamedTuple

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Rectangle

from lmcourse.bert import BertModel
from lmcourse.plots import plot_heatmap
from lmcourse.tokenize import WordPieceTokenizer, bert_pre_tokenize
from lmcourse.validate import check_float, check_int, check_nonempty, check_type

PRONOUN = "it"


@dataclass(frozen=True)
class MinimalPair:
    """Two sentences from ``frame`` (with ``{}`` for the adjective): ``adjectives[k]`` makes *it*
    refer to ``nouns[k]``."""
    frame: str
    nouns: tuple[str, str]
    adjectives: tuple[str, str]

    def sentences(self) -> list["PronounSentence"]:
        """The pair's two sentences, the first with ``nouns[0]`` as the antecedent."""
        return [PronounSentence(self.frame.format(adj), self.nouns[k], self.nouns[1 - k])
                for k, adj in enumerate(self.adjectives)]


@dataclass(frozen=True)
class PronounSentence:
    """One sentence with one *it*, its antecedent and the other candidate noun (the distractor)."""
    text: str
    antecedent: str
    distractor: str


PAIRS = tuple(MinimalPair(frame, nouns, adjectives) for frame, nouns, adjectives in [
    ("the animal didn't cross the street because it was too {}", ("animal", "street"), ("tired", "wide")),
    ("the trophy didn't fit in the suitcase because it was too {}", ("trophy", "suitcase"), ("big", "small")),
    ("the table would not go through the door because it was too {}", ("table", "door"), ("wide", "narrow")),
    ("the stone broke the glass because it was so {}", ("stone", "glass"), ("heavy", "thin")),
    ("the horse could not pull the cart because it was too {}", ("horse", "cart"), ("weak", "heavy")),
    ("the dog could not jump over the fence because it was too {}", ("dog", "fence"), ("old", "high")),
    ("the truck could not go under the bridge because it was too {}", ("truck", "bridge"), ("tall", "low")),
    ("the car would not fit in the garage because it was too {}", ("car", "garage"), ("long", "short")),
    ("the cat could not catch the bird because it was too {}", ("cat", "bird"), ("slow", "fast")),
    ("the snake could not swallow the egg because it was too {}", ("snake", "egg"), ("small", "large")),
    ("the box would not fit on the shelf because it was too {}", ("box", "shelf"), ("big", "narrow")),
    ("the bag could not hold the laptop because it was too {}", ("bag", "laptop"), ("small", "large")),
    ("the chair could not hold the bear because it was too {}", ("chair", "bear"), ("weak", "heavy")),
    ("the plane could not land on the field because it was too {}", ("plane", "field"), ("heavy", "soft")),
    ("the rope could not hold the boat because it was too {}", ("rope", "boat"), ("thin", "heavy")),
    ("the key would not fit in the lock because it was too {}", ("key", "lock"), ("thick", "narrow")),
    ("the bird could not crack the nut because it was too {}", ("bird", "nut"), ("weak", "hard")),
    ("the mouse could not reach the cheese because it was too {}", ("mouse", "cheese"), ("short", "high")),
    ("the puppy could not chew the bone because it was too {}", ("puppy", "bone"), ("young", "hard")),
    ("the ship could not enter the harbor because it was too {}", ("ship", "harbor"), ("large", "shallow")),
    ("the piano would not go up the ramp because it was too {}", ("piano", "ramp"), ("heavy", "steep")),
    ("the cow could not cross the river because it was too {}", ("cow", "river"), ("weak", "deep")),
    ("the lamp did not light the room because it was too {}", ("lamp", "room"), ("dim", "big")),
    ("the blanket did not cover the bed because it was too {}", ("blanket", "bed"), ("short", "wide")),
    ("the shoe would not fit on the foot because it was too {}", ("shoe", "foot"), ("tight", "swollen")),
    ("the rabbit could not climb the hill because it was too {}", ("rabbit", "hill"), ("tired", "steep")),
    ("the coat would not fit in the drawer because it was too {}", ("coat", "drawer"), ("thick", "shallow")),
    ("the phone did not fit in the pocket because it was too {}", ("phone", "pocket"), ("large", "small")),
    ("the tent did not keep out the rain because it was too {}", ("tent", "rain"), ("thin", "heavy")),
    ("the roof did not hold the snow because it was too {}", ("roof", "snow"), ("old", "heavy")),
    ("the wolf could not catch the deer because it was too {}", ("wolf", "deer"), ("slow", "quick")),
    ("the ice could not hold the tiger because it was too {}", ("ice", "tiger"), ("thin", "heavy")),
    ("the engine could not move the train because it was too {}", ("engine", "train"), ("weak", "long")),
    ("the knife could not cut the meat because it was too {}", ("knife", "meat"), ("dull", "tough")),
    ("the axe could not split the log because it was too {}", ("axe", "log"), ("blunt", "thick")),
    ("the net could not hold the fish because it was too {}", ("net", "fish"), ("weak", "heavy")),
    ("the bus could not climb the road because it was too {}", ("bus", "road"), ("old", "steep")),
    ("the bike did not fit in the car because it was too {}", ("bike", "car"), ("big", "small")),
    ("the painting did not fit on the wall because it was too {}", ("painting", "wall"), ("large", "small")),
    ("the bridge could not carry the truck because it was too {}", ("bridge", "truck"), ("weak", "heavy")),
    ("the bird could not fly over the mountain because it was too {}", ("bird", "mountain"), ("tired", "high")),
    ("the collar did not fit the dog because it was too {}", ("collar", "dog"), ("tight", "fat")),
])


class LocatedSentence(NamedTuple):
    """A sentence's word pieces with ``[CLS]`` and ``[SEP]``, and the piece positions of its words."""
    tokens: list[str]
    input_ids: list[int]
    pronoun: list[int]
    antecedent: list[int]
    distractor: list[int]


def locate(tokenizer: WordPieceTokenizer, sentence: PronounSentence) -> LocatedSentence:
    """Encode ``sentence`` and find the pieces of *it* and of the two nouns (each must occur once)."""
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    check_type(sentence, "sentence", PronounSentence)
    words = bert_pre_tokenize(sentence.text, tokenizer.lowercase, tokenizer.strip_accents)
    pieces, spans = [], []
    for word in words:
        wp = tokenizer.word_pieces(word)
        spans.append(list(range(1 + len(pieces), 1 + len(pieces) + len(wp))))   # +1 for [CLS]
        pieces.extend(wp)
    found = {}
    for role, word in (("pronoun", PRONOUN), ("antecedent", sentence.antecedent), ("distractor", sentence.distractor)):
        at = [k for k, w in enumerate(words) if w == word.lower()]
        if len(at) != 1:
            raise ValueError(f"sentence must hold the {role} {word!r} exactly once, "
                             f"found {len(at)} in {sentence.text!r}")
        found[role] = spans[at[0]]
    enc = tokenizer.encode_pieces(pieces)
    return LocatedSentence(enc.tokens, enc.input_ids, found["pronoun"], found["antecedent"], found["distractor"])


class SentenceScores(NamedTuple):
    """Every head's scores on one sentence, each (L, H)."""
    preference: torch.Tensor     # weight from 'it' to the antecedent minus that to the distractor
    control: torch.Tensor        # the same difference, averaged over the control rows
    to_nouns: torch.Tensor       # weight from 'it' to the two nouns together
    nouns_control: torch.Tensor  # the same, averaged over the control rows


def sentence_scores(attention: torch.Tensor, located: LocatedSentence) -> SentenceScores:
    """Every head's scores on one sentence: attention (L, H, T, T), rows attending to columns,
    T = len(located.tokens). A word's weight is the sum over its pieces' columns, averaged over its
    pieces' rows; the control rows are every row but those of *it* and the two nouns."""
    check_type(attention, "attention", torch.Tensor)
    check_type(located, "located", LocatedSentence)
    T = len(located.tokens)
    if attention.dim() != 4 or attention.shape[-2:] != (T, T):
        raise ValueError(f"attention must be (layers, heads, {T}, {T}) for this sentence, got {tuple(attention.shape)}")
    if not attention.is_floating_point():
        raise ValueError(f"attention must hold floating-point weights, got {attention.dtype}")
    to_ante = attention[..., located.antecedent].sum(-1)                  # (L, H, T)
    to_distr = attention[..., located.distractor].sum(-1)                 # (L, H, T)
    excluded = set(located.pronoun) | set(located.antecedent) | set(located.distractor)
    rows = [t for t in range(T) if t not in excluded]
    if not rows:
        raise ValueError("located must leave at least one token besides 'it' and the two nouns")
    gap, both, it = to_ante - to_distr, to_ante + to_distr, located.pronoun
    return SentenceScores(gap[..., it].mean(-1), gap[..., rows].mean(-1),
                          both[..., it].mean(-1), both[..., rows].mean(-1))


def attention_maps(model: BertModel, tokenizer: WordPieceTokenizer, sentences: list[PronounSentence]
                   ) -> tuple[list[LocatedSentence], list[torch.Tensor]]:
    """Locate each sentence and run ``model`` (a :class:`lmcourse.bert.BertModel`) on it alone.

    Returns the located sentences and, for each, its attention weights (L, H, T, T).
    """
    check_type(model, "model", BertModel)
    check_nonempty(sentences, "sentences")
    device = next(model.parameters()).device
    located, maps = [], []
    for s in sentences:
        loc = locate(tokenizer, s)
        with torch.no_grad():
            att = model(torch.tensor([loc.input_ids], device=device), output_attentions=True).attentions
        located.append(loc)
        maps.append(torch.stack(att)[:, 0].cpu())                     # L x (1, H, T, T) -> (L, H, T, T)
    return located, maps


class HeadStudy(NamedTuple):
    """Per-pair scores of every head, each (P, L, H): the fields of :class:`SentenceScores`
    averaged over the pair's two sentences, and

    - ``flips``: 1.0 where the head gives the antecedent more weight than the distractor in both
      sentences (its choice follows the adjective), ``wrong_flips`` 1.0 where it gives the
      distractor more in both (it follows the adjective the wrong way);
    - ``first_noun``: the weight from *it* to the pair's first noun minus that to its second,
      whatever the adjective.
    """
    preference: torch.Tensor
    control: torch.Tensor
    to_nouns: torch.Tensor
    nouns_control: torch.Tensor
    flips: torch.Tensor
    wrong_flips: torch.Tensor
    first_noun: torch.Tensor

    @property
    def excess(self) -> torch.Tensor:
        """Preference minus control, (P, L, H)."""
        return self.preference - self.control


def study_heads(located: list[LocatedSentence], maps: list[torch.Tensor]) -> HeadStudy:
    """Score every head on sentences that come in minimal pairs, in the order of
    :meth:`MinimalPair.sentences` (sentences 2p and 2p + 1 form pair p, the first noun the antecedent
    of the first); maps as from :func:`attention_maps`."""
    check_nonempty(located, "located")
    if len(maps) != len(located):
        raise ValueError(f"maps must have one tensor per sentence ({len(located)}), got {len(maps)}")
    if len(located) % 2:
        raise ValueError(f"located must hold whole minimal pairs (an even number of sentences), got {len(located)}")
    for p in range(0, len(located), 2):
        if (located[p].antecedent, located[p].distractor) != (located[p + 1].distractor, located[p + 1].antecedent):
            raise ValueError(f"located[{p}] and located[{p + 1}] must swap antecedent and distractor (a minimal pair)")
    scores = [sentence_scores(a, s) for a, s in zip(maps, located)]
    pref, ctrl, nouns, nouns_ctrl = (torch.stack(x).view(-1, 2, *x[0].shape) for x in zip(*scores))   # (P, 2, L, H)
    return HeadStudy(pref.mean(1), ctrl.mean(1), nouns.mean(1), nouns_ctrl.mean(1), (pref > 0).all(1).float(),
                     (pref < 0).all(1).float(), (pref[:, 0] - pref[:, 1]) / 2)


def split_pairs(num_pairs: int, seed: int = 0) -> tuple[list[int], list[int]]:
    """A seeded random split of pair indices into a selection half and a test half (sorted)."""
    check_int(num_pairs, "num_pairs", minimum=2)
    order = torch.randperm(num_pairs, generator=torch.Generator().manual_seed(seed)).tolist()
    return sorted(order[:num_pairs // 2]), sorted(order[num_pairs // 2:])


class HeadSummary(NamedTuple):
    """One head's statistics over a set of pairs: (mean, standard error) of each score, and the
    shares of pairs it flips the right way and the wrong way."""
    layer: int                   # 1-based
    head: int                    # 1-based
    preference: tuple[float, float]
    control: tuple[float, float]
    excess: tuple[float, float]
    to_nouns: tuple[float, float]
    nouns_control: tuple[float, float]
    first_noun: tuple[float, float]
    flip_rate: float
    wrong_flip_rate: float
    pairs: int

    @property
    def accuracy(self) -> float:
        """Share of the sentences in which the head gives the antecedent more weight than the other
        noun; a head blind to the adjective scores exactly 0.5, since each noun is the antecedent once."""
        return 0.5 + (self.flip_rate - self.wrong_flip_rate) / 2


def summarize(study: HeadStudy, pairs: list[int], layer: int, head: int) -> HeadSummary:
    """One head's (1-based ``layer``, ``head``) statistics over the pairs with indices ``pairs``."""
    check_type(study, "study", HeadStudy)
    check_nonempty(pairs, "pairs")
    P, L, H = study.preference.shape
    check_int(layer, "layer", minimum=1, maximum=L)
    check_int(head, "head", minimum=1, maximum=H)
    if len(pairs) < 2 or min(pairs) < 0 or max(pairs) >= P:
        raise ValueError(f"pairs must hold at least 2 indices in [0, {P}), got {pairs}")

    def pick(x):                                                     # (P, L, H) -> (len(pairs),)
        return x[pairs, layer - 1, head - 1]

    def mean_se(x):
        return pick(x).mean().item(), (pick(x).std() / len(pairs) ** 0.5).item()

    return HeadSummary(layer, head, mean_se(study.preference), mean_se(study.control), mean_se(study.excess),
                       mean_se(study.to_nouns), mean_se(study.nouns_control), mean_se(study.first_noun),
                       pick(study.flips).mean().item(),
                       pick(study.wrong_flips).mean().item(), len(pairs))


def best_head(scores: torch.Tensor, pairs: list[int]) -> tuple[int, int]:
    """The (1-based layer, head) with the largest mean of ``scores`` (P, L, H) over ``pairs``."""
    check_type(scores, "scores", torch.Tensor)
    check_nonempty(pairs, "pairs")
    if scores.dim() != 3:
        raise ValueError(f"scores must be (pairs, layers, heads), got {tuple(scores.shape)}")
    if min(pairs) < 0 or max(pairs) >= scores.shape[0]:
        raise ValueError(f"pairs must hold indices in [0, {scores.shape[0]}), got {pairs}")
    layer, head = divmod(int(scores[pairs].mean(0).argmax()), scores.shape[2])
    return layer + 1, head + 1


def plot_head_summary(values: torch.Tensor, title: str | None = None, colorbar_label: str = "weight difference",
                      mark: tuple[int, int] | None = None, limit: float | None = None, ax=None):
    """A (layers, heads) summary as a heatmap on a colour scale from ``-limit`` to ``limit`` (default:
    the largest magnitude), layer 1 at the top; ``mark`` (1-based layer, head) outlines one head.
    Returns the axes."""
    check_type(values, "values", torch.Tensor)
    if values.dim() != 2:
        raise ValueError(f"values must be (layers, heads), got {tuple(values.shape)}")
    L, H = values.shape
    if mark is not None and not (len(mark) == 2 and 1 <= mark[0] <= L and 1 <= mark[1] <= H):
        raise ValueError(f"mark must be a (layer, head) pair within (1..{L}, 1..{H}), got {mark}")
    if limit is not None:
        check_float(limit, "limit", minimum=0.0, strict_minimum=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.6))
    top = limit if limit is not None else max(values.abs().max().item(), 1e-6)
    plot_heatmap(values, xlabels=[str(h) for h in range(1, H + 1)], ylabels=[str(k) for k in range(1, L + 1)],
                 title=title, cmap="RdBu_r", vmin=-top, vmax=top, ax=ax, colorbar_label=colorbar_label)
    ax.tick_params(axis="x", labelrotation=0)
    plt.setp(ax.get_xticklabels(), ha="center")
    ax.set(xlabel="head", ylabel="layer")
    if mark is not None:
        ax.add_patch(Rectangle((mark[1] - 1.5, mark[0] - 1.5), 1, 1, fill=False, edgecolor="black", lw=2))
    return ax


class HeadMap(NamedTuple):
    """One head's attention on one sentence: weights (T, T), row ``rows[i]`` attending to column ``columns[j]``."""
    weights: torch.Tensor
    rows: list[str]
    columns: list[str]


def head_attention(model: BertModel, tokenizer: WordPieceTokenizer, text: str, layer: int, head: int) -> HeadMap:
    """The attention weights of one head (1-based ``layer`` and ``head``) on ``text``, with its word
    pieces (``[CLS]`` and ``[SEP]`` included) as the labels of both axes."""
    check_type(model, "model", BertModel)
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    check_type(text, "text", str)
    if not text.strip():
        raise ValueError("text must not be empty")
    check_int(layer, "layer", minimum=1, maximum=model.config.num_layers)
    check_int(head, "head", minimum=1, maximum=model.config.num_heads)
    enc = tokenizer.encode(text)
    with torch.no_grad():
        att = model(torch.tensor([enc.input_ids], device=next(model.parameters()).device),
                    output_attentions=True).attentions
    return HeadMap(att[layer - 1][0, head - 1].cpu(), list(enc.tokens), list(enc.tokens))
