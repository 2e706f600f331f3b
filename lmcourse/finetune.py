"""Fine-tuning BERT: the four task types of Devlin et al. (2019), with small data built here.

1. sentence-pair classification: ``[CLS] A [SEP] B [SEP]`` -> a label from the pooled [CLS] vector;
2. single-sentence classification: ``[CLS] A [SEP]`` -> a label (sentiment of the polarity sentences);
3. extractive question answering: ``[CLS] question [SEP] passage [SEP]``; a start vector S and an end
   vector E score every passage position, the answer is the span i..j (j >= i) maximising S.h_i + E.h_j;
4. token tagging (BIO): a label per word, predicted from the word's first word piece.

Each task puts a small head on one encoder. :func:`finetune_task` runs one fine-tuning: of every
layer (BERT's way) or, partially, of the top k layers only (:func:`freeze_lower_layers`), the frozen
bottom run once on every example (:func:`cache_frozen_states`), k = 0 being a probe. Scores:
:func:`task_scores` (exact spans and error kinds for QA, entity-level F1 for tagging), against
baselines that read no context (:func:`first_span_answer`, :func:`word_tag_baseline`).
"""
import copy
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import padding_mask
from lmcourse.bert import BertModel
from lmcourse.masking import IGNORE_INDEX
from lmcourse.seed import set_seed
from lmcourse.tokenize import WordPieceTokenizer, pad_encodings
from lmcourse.train import evaluate_loss, fit
from lmcourse.validate import check_float, check_int, check_nonempty, check_type

TASKS = ("pair", "single", "qa", "tagging")
TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")

_FIRST = ["anna", "omar", "li", "maria", "john", "fatima", "peter", "yuki", "carlos", "emma",
          "david", "sara", "ivan", "nina", "paul", "aisha"]
_LAST = ["smith", "chen", "garcia", "kim", "novak", "brown", "tanaka", "silva", "muller", "jones"]
_CITIES = ["paris", "cairo", "tokyo", "sydney", "lima", "oslo", "berlin", "madrid", "toronto",
           "new york", "hong kong", "buenos aires", "cape town", "rome", "dublin", "seoul"]
# Names and places that never occur in the lists above: a tagger that memorised those cannot know them.
_NEW_FIRST = ["kofi", "ingrid", "mateo", "priya", "tomasz", "leila", "hiro", "zara"]
_NEW_LAST = ["okafor", "lindqvist", "haddad", "novikov", "costa", "mwangi"]
_NEW_CITIES = ["nairobi", "lisbon", "hanoi", "quito", "warsaw", "kyoto", "rio de janeiro", "san diego"]
_JOBS = ["teacher", "doctor", "pilot", "farmer", "lawyer", "chef", "nurse", "painter", "baker", "judge"]


# ---------------------------------------------------------------------------------------------
# Heads
# ---------------------------------------------------------------------------------------------
class BertForTask(nn.Module):
    """An encoder plus one task head.

    task 'pair' / 'single': logits (B, num_labels) from the pooled [CLS] vector (BERT's choice) or,
    with ``pooling='mean'``, from the mean of the real tokens' vectors (how sentence encoders such
    as MiniLM were trained);
    task 'qa': (start_logits (B, T), end_logits (B, T)) from one linear map to 2 scores per position
    (the start vector S and end vector E of the paper); task 'tagging': logits (B, T, num_labels).
    """

    def __init__(self, bert: BertModel, task: str, num_labels: int = 2, dropout: float = 0.1,
                 pooling: str = "cls"):
        super().__init__()
        check_type(bert, "bert", BertModel)
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        check_int(num_labels, "num_labels", minimum=1)
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', got {pooling!r}")
        self.bert, self.task, self.pooling = bert, task, pooling
        d = bert.config.d_model
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(d, 2 if task == "qa" else num_labels)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)
        self.head.to(next(bert.parameters()).device)

    def frozen_layers(self) -> int:
        """How many encoder layers, counted from the bottom, have no trainable parameter (0 if the
        embeddings are trainable: then nothing below the head can be computed once and reused)."""
        if any(p.requires_grad for p in self.bert.embeddings.parameters()):
            return 0
        n = 0
        for layer in self.bert.layers:
            if any(p.requires_grad for p in layer.parameters()):
                break
            n += 1
        return n

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, frozen_states=None):
        """``frozen_states`` (B, T, C), from :func:`cache_frozen_states`: the output of the frozen
        bottom layers, so that only the trainable top layers run (their result equals the full
        forward pass in eval mode)."""
        if frozen_states is None:
            out = self.bert(input_ids, token_type_ids, attention_mask)
            hidden, pooled = out.last_hidden_state, out.pooler_output
        else:
            hidden = frozen_states
            mask = None if attention_mask is None or bool(attention_mask.all()) else padding_mask(attention_mask)
            for layer in self.bert.layers[self.frozen_layers():]:
                hidden, _ = layer(hidden, mask)                             # (B, T, C)
            if attention_mask is not None:
                hidden = hidden * attention_mask[..., None]                 # zeros at padding, as BertModel
            pooled = torch.tanh(self.bert.pooler(hidden[:, 0]))             # (B, C)
        if self.task in ("pair", "single"):
            if self.pooling == "cls":
                return self.head(self.dropout(pooled))                      # (B, C) -> (B, labels)
            m = (torch.ones_like(input_ids) if attention_mask is None else attention_mask)[..., None].float()
            mean = (hidden * m).sum(1) / m.sum(1)                           # (B, T, C) -> (B, C)
            return self.head(self.dropout(mean))                            # (B, C) -> (B, labels)
        logits = self.head(self.dropout(hidden))                            # (B, T, C) -> (B, T, k)
        if self.task == "qa":
            start, end = logits.unbind(-1)                                  # (B, T) each: S.h_t, E.h_t
            return start, end
        return logits                                                       # (B, T, labels)


def freeze_lower_layers(model: BertForTask, num_trainable_layers: int) -> int:
    """Freeze the embeddings and all but the top ``num_trainable_layers`` encoder layers;
    return the number of parameters left trainable (head and pooler included)."""
    check_type(model, "model", BertForTask)
    L = model.bert.config.num_layers
    check_int(num_trainable_layers, "num_trainable_layers", minimum=0, maximum=L)
    for p in model.bert.embeddings.parameters():
        p.requires_grad_(False)
    for i, layer in enumerate(model.bert.layers):
        for p in layer.parameters():
            p.requires_grad_(i >= L - num_trainable_layers)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@torch.no_grad()
def cache_frozen_states(encoder: BertModel, batches: list[dict], num_frozen: int, start: int = 0) -> list[dict]:
    """Copies of ``batches`` with ``frozen_states`` (B, T, C): the embeddings and the bottom
    ``num_frozen`` layers of ``encoder`` run once, in eval mode (no dropout), zeros at padding.
    A :class:`BertForTask` whose bottom ``num_frozen`` layers are frozen then runs only its top on
    them; with every layer frozen, the head alone learns on fixed vectors (a probe). With
    ``start > 0`` the batches already hold the states after ``start`` layers and only the layers
    from there up to ``num_frozen`` run."""
    check_type(encoder, "encoder", BertModel)
    check_nonempty(batches, "batches")
    check_int(num_frozen, "num_frozen", minimum=0, maximum=encoder.config.num_layers)
    check_int(start, "start", minimum=0, maximum=num_frozen)
    if start and not all("frozen_states" in b for b in batches):
        raise ValueError("start > 0 needs batches that carry frozen_states")
    was_training = encoder.training
    encoder.eval()
    out = []
    for b in batches:
        am = b["attention_mask"]
        h = b["frozen_states"] if start else encoder.embeddings(b["input_ids"], b["token_type_ids"])  # (B, T, C)
        mask = None if bool(am.all()) else padding_mask(am)
        for layer in encoder.layers[start:num_frozen]:
            h, _ = layer(h, mask)
        out.append({**b, "frozen_states": h * am[..., None]})             # (B, T, C)
    encoder.train(was_training)
    return out


def best_span(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor,
              max_answer_len: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """The span (i, j) with j >= i, j - i < ``max_answer_len`` and both in ``allowed`` that
    maximises start_i + end_j. start_logits, end_logits (B, T), allowed bool (B, T) -> (B,), (B,)."""
    if start_logits.shape != end_logits.shape or start_logits.shape != allowed.shape:
        raise ValueError(f"start_logits {tuple(start_logits.shape)}, end_logits {tuple(end_logits.shape)} "
                         f"and allowed {tuple(allowed.shape)} must share (batch, time)")
    check_int(max_answer_len, "max_answer_len", minimum=1)
    T = start_logits.size(1)
    scores = start_logits[:, :, None] + end_logits[:, None, :]             # (B, T, 1) + (B, 1, T) -> (B, T, T)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    valid = (j >= i) & (j - i < max_answer_len)                            # (T, T): end >= start
    valid = valid.to(allowed.device) & allowed[:, :, None] & allowed[:, None, :]
    flat = scores.masked_fill(~valid, float("-inf")).flatten(1).argmax(1)  # (B,)
    return flat // T, flat % T


# ---------------------------------------------------------------------------------------------
# Small datasets built by the course (templated, seeded)
# ---------------------------------------------------------------------------------------------
def _person(rng, first=_FIRST, last=_LAST):
    return f"{rng.choice(first)} {rng.choice(last)}"


def pair_examples(n: int, seed: int = 0) -> list[tuple[str, str, int]]:
    """Sentence pairs ``(A, B, label)``: label 1 if B agrees with A, 0 if it contradicts A.

    A says where someone lives and what they do; B restates one fact, right or wrong, so the label
    depends on comparing the two sentences (half of each label).
    """
    check_int(n, "n", minimum=1)
    rng = random.Random(seed)
    out = []
    for k in range(n):
        name, (c1, c2), (j1, j2) = rng.choice(_FIRST), rng.sample(_CITIES, 2), rng.sample(_JOBS, 2)
        a = f"{name} lives in {c1} and works as a {j1} ."
        label = k % 2
        if rng.random() < 0.5:
            b = f"{name} lives in {c1 if label else c2} ."
        else:
            b = f"{name} is a {j1 if label else j2} ."
        out.append((a, b, label))
    return out


@dataclass
class QAExample:
    """A question, a passage as words, and the answer as the word span ``[start, end]`` (inclusive)."""
    question: str
    words: list[str]
    start: int
    end: int

    @property
    def answer(self) -> str:
        return " ".join(self.words[self.start:self.end + 1])


def qa_examples(n: int, seed: int = 0) -> list[QAExample]:
    """Passages about two or three people (home city, job); questions ask for one fact."""
    check_int(n, "n", minimum=1)
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        people = [(_person(rng), c, j) for c, j in zip(rng.sample(_CITIES, 3), rng.sample(_JOBS, 3))]
        people = people[:rng.choice([2, 3])]
        words, spans = [], []
        for name, city, job in people:
            sent = f"{name} lives in".split()
            city_at = len(words) + len(sent)
            sent += city.split() + ["and", "works", "as", "a"]
            job_at = len(words) + len(sent)
            sent += [job, "."]
            name_at = len(words)
            spans.append(((name_at, name_at + 1), (city_at, city_at + len(city.split()) - 1), (job_at, job_at)))
            words += sent
        k = rng.randrange(len(people))
        name, city, job = people[k]
        kind = rng.choice(["where", "job", "who"])
        if kind == "where":
            q, (s, e) = f"where does {name} live ?", spans[k][1]
        elif kind == "job":
            q, (s, e) = f"what is the job of {name} ?", spans[k][2]
        else:
            q, (s, e) = f"who lives in {city} ?", spans[k][0]
        out.append(QAExample(q, words, s, e))
    return out


def joinable_qa_examples(n: int, seed: int = 0) -> list[QAExample]:
    """n passages of ``qa_examples`` that can be joined into one text in which every question still has
    exactly one right answer: no person is named twice, and no city asked about ("who lives in ...") is named
    twice, across all n passages."""
    check_int(n, "n", minimum=1)
    chosen, names, cities, asked = [], set(), set(), set()
    for ex in qa_examples(100 * n, seed):
        people = [sentence.split(" lives in ") for sentence in " ".join(ex.words).split(" . ") if sentence]
        ex_names = [name for name, _ in people]
        ex_cities = [rest.split(" and works")[0] for _, rest in people]
        city = ex.question[len("who lives in "):-2] if ex.question.startswith("who lives in ") else None
        if (len(set(ex_names)) < len(ex_names) or names & set(ex_names) or asked & set(ex_cities)
                or (city is not None and (city in cities or ex_cities.count(city) > 1))):
            continue
        chosen.append(ex)
        names |= set(ex_names)
        cities |= set(ex_cities)
        asked |= {city} - {None}
        if len(chosen) == n:
            return chosen
    raise ValueError(f"n = {n} is too many: fewer joinable passages were found")


def tagging_examples(n: int, seed: int = 0, new_names: bool = False) -> list[tuple[list[str], list[str]]]:
    """Sentences as words with BIO tags for people (PER) and places (LOC); with ``new_names`` the
    people and places come from lists disjoint from the default ones (a test of generalisation)."""
    check_int(n, "n", minimum=1)
    rng = random.Random(seed)
    first, last, cities = (_NEW_FIRST, _NEW_LAST, _NEW_CITIES) if new_names else (_FIRST, _LAST, _CITIES)
    templates = ["{p} flew from {c} to {c2} .", "yesterday {p} met {p2} in {c} .",
                 "{p} said the weather in {c} was cold .", "in {c} , {p} opened a small shop .",
                 "the train to {c} was late , {p} said ."]
    out = []
    for _ in range(n):
        words, tags = [], []
        for part in rng.choice(templates).split():
            if part in ("{p}", "{p2}"):
                name = (_person(rng, first, last) if rng.random() < 0.6 else rng.choice(first)).split()
                words += name
                tags += ["B-PER"] + ["I-PER"] * (len(name) - 1)
            elif part in ("{c}", "{c2}"):
                city = rng.choice(cities).split()
                words += city
                tags += ["B-LOC"] + ["I-LOC"] * (len(city) - 1)
            else:
                words.append(part)
                tags.append("O")
        out.append((words, tags))
    return out


# ---------------------------------------------------------------------------------------------
# Encoding into batches
# ---------------------------------------------------------------------------------------------
def _batches(items: list[dict], batch_size: int, pad_id: int, shuffle_seed: int | None):
    order = list(range(len(items)))
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(order)
    out = []
    for s in range(0, len(order), batch_size):
        chunk = [items[i] for i in order[s:s + batch_size]]
        batch = pad_encodings([c["encoding"] for c in chunk], pad_id)
        T = batch["input_ids"].size(1)
        for key in chunk[0]:
            if key == "encoding":
                continue
            values = [c[key] for c in chunk]
            if isinstance(values[0], list):   # per-position labels or masks: pad to T
                fill = False if isinstance(values[0][0], bool) else IGNORE_INDEX
                values = [v + [fill] * (T - len(v)) for v in values]
            batch[key] = torch.tensor(values)
        out.append(batch)
    return out


def encode_task(tokenizer: WordPieceTokenizer, task: str, examples: list, max_length: int = 64) -> list[dict]:
    """Encode examples of ``task`` into dicts with an ``encoding`` and the task's labels:
    'single' (text, label) / 'pair' (a, b, label) -> ``label``; 'qa' :class:`QAExample` ->
    ``start``, ``end`` (piece positions) and ``context`` (bool per position, passage pieces);
    'tagging' (words, tags) -> ``labels`` (tag id on each word's first piece, -100 elsewhere)."""
    check_type(tokenizer, "tokenizer", WordPieceTokenizer)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    check_nonempty(examples, "examples")
    items = []
    for ex in examples:
        if task == "single":
            items.append({"encoding": tokenizer.encode(ex[0], max_length=max_length), "label": ex[1]})
        elif task == "pair":
            items.append({"encoding": tokenizer.encode(ex[0], ex[1], max_length=max_length), "label": ex[2]})
        elif task == "qa":
            q = tokenizer.tokenize(ex.question)
            pieces, first, last = [], [], []
            for w in ex.words:
                first.append(len(pieces))
                pieces.extend(tokenizer.tokenize(w))
                last.append(len(pieces) - 1)
            enc = tokenizer.encode_pieces(q, pieces)
            if len(enc.input_ids) > max_length:
                raise ValueError(f"a QA example needs {len(enc.input_ids)} > max_length={max_length} pieces")
            offset = len(q) + 2                       # [CLS] question [SEP]
            context = [offset <= t < offset + len(pieces) for t in range(len(enc.input_ids))]
            items.append({"encoding": enc, "start": offset + first[ex.start],
                          "end": offset + last[ex.end], "context": context})
        else:
            words, tags = ex
            pieces, labels = [], []
            for w, t in zip(words, tags):
                wp = tokenizer.tokenize(w)
                pieces.extend(wp)
                labels += [TAGS.index(t)] + [IGNORE_INDEX] * (len(wp) - 1)   # first piece labels the word
            enc = tokenizer.encode_pieces(pieces, max_length=max_length)
            labels = [IGNORE_INDEX] + labels[:len(enc.input_ids) - 2] + [IGNORE_INDEX]
            items.append({"encoding": enc, "labels": labels})
    return items


def task_batches(tokenizer: WordPieceTokenizer, task: str, examples: list, batch_size: int = 16,
                 max_length: int = 64, shuffle: bool = True):
    """``epoch -> batches`` (reshuffled each epoch when ``shuffle``) for :func:`lmcourse.train.fit`."""
    check_int(batch_size, "batch_size", minimum=1)
    items = encode_task(tokenizer, task, examples, max_length)
    return lambda epoch: _batches(items, batch_size, tokenizer.pad_id, epoch if shuffle else None)


def task_loss(model: BertForTask, batch: dict) -> torch.Tensor:
    """The fine-tuning loss: cross-entropy on labels; for QA the mean of start and end losses."""
    out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"], batch.get("frozen_states"))
    if model.task in ("pair", "single"):
        return F.cross_entropy(out, batch["label"])
    if model.task == "qa":
        start, end = out
        blocked = ~batch["context"]
        start, end = start.masked_fill(blocked, -1e4), end.masked_fill(blocked, -1e4)
        return (F.cross_entropy(start, batch["start"]) + F.cross_entropy(end, batch["end"])) / 2
    return F.cross_entropy(out.flatten(0, 1), batch["labels"].flatten(), ignore_index=IGNORE_INDEX)


@torch.no_grad()
def task_accuracy(model: BertForTask, batches: list[dict]) -> float:
    """Accuracy: of labels (pair, single), of exact answer spans (qa), of word tags (tagging)."""
    check_nonempty(batches, "batches")
    was_training = model.training
    model.eval()
    right = total = 0
    for b in batches:
        out = model(b["input_ids"], b["token_type_ids"], b["attention_mask"], b.get("frozen_states"))
        if model.task in ("pair", "single"):
            right += (out.argmax(-1) == b["label"]).sum().item()
            total += len(b["label"])
        elif model.task == "qa":
            s, e = best_span(*out, b["context"])
            right += ((s == b["start"]) & (e == b["end"])).sum().item()
            total += len(s)
        else:
            keep = b["labels"] != IGNORE_INDEX
            right += (out.argmax(-1)[keep] == b["labels"][keep]).sum().item()
            total += keep.sum().item()
    model.train(was_training)
    return right / total


# ---------------------------------------------------------------------------------------------
# Scoring beyond accuracy
# ---------------------------------------------------------------------------------------------
def bio_entities(tags: list[str]) -> set[tuple[int, int, str]]:
    """The entities of a BIO tag sequence as ``(first word, last word, type)``; an ``I-X`` that does
    not continue an entity of type X starts one (the CoNLL convention)."""
    check_type(tags, "tags", list)
    spans, start, kind = set(), None, None
    for i, t in enumerate(list(tags) + ["O"]):
        continues = t.startswith("I-") and kind == t[2:]
        if start is not None and not continues:
            spans.add((start, i - 1, kind))
            start, kind = None, None
        if t.startswith("B-") or (t.startswith("I-") and not continues):
            start, kind = i, t[2:]
    return spans


def entity_f1(gold: list[list[str]], predicted: list[list[str]]) -> float:
    """Entity-level F1 over sentences: an entity counts only if its span and type are both right."""
    check_nonempty(gold, "gold")
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} sentences but predicted has {len(predicted)}")
    tp = n_gold = n_pred = 0
    for g, p in zip(gold, predicted):
        eg, ep = bio_entities(list(g)), bio_entities(list(p))
        tp, n_gold, n_pred = tp + len(eg & ep), n_gold + len(eg), n_pred + len(ep)
    return 2 * tp / (n_gold + n_pred) if n_gold + n_pred else 1.0


def span_error_kind(start: int, end: int, gold_start: int, gold_end: int) -> str:
    """'exact', 'overlap' (a boundary error: shares a piece with the answer) or 'elsewhere'."""
    if (start, end) == (gold_start, gold_end):
        return "exact"
    return "overlap" if start <= gold_end and gold_start <= end else "elsewhere"


# ---------------------------------------------------------------------------------------------
# One fine-tuning run
# ---------------------------------------------------------------------------------------------
def finetune_task(encoder: BertModel, task: str, train_batches: list[dict], test_batches: list[dict],
                  trainable_layers: int | None, epochs: int, lr: float, seed: int, pooling: str = "cls",
                  tol: float | None = None) -> BertForTask:
    """The model, in eval mode, after fine-tuning a copy of ``encoder`` with a new head for
    ``task`` for ``epochs`` passes over ``train_batches`` (a new order each epoch, from ``seed``),
    or, with ``tol``, until the task loss on ``train_batches`` (mean over the batches) falls below ``tol`` after a pass
    (the model fits its training examples), ``epochs`` passes at most. ``trainable_layers=None``
    trains everything (BERT's full fine-tuning); ``k`` trains only the top k layers, the pooler and
    the head, and then the batches must carry the ``frozen_states`` of the other layers
    (:func:`cache_frozen_states`); ``0`` is a probe. ``pooling``: as in :class:`BertForTask`.
    ``encoder`` is left untouched: only what trains is copied, the frozen embeddings and layers share
    its (never updated) weights."""
    check_type(encoder, "encoder", BertModel)
    check_nonempty(train_batches, "train_batches")
    check_int(epochs, "epochs", minimum=1)
    if tol is not None:
        check_float(tol, "tol", minimum=0.0, strict_minimum=True)
    if trainable_layers is not None and not all("frozen_states" in b for b in train_batches + test_batches):
        raise ValueError("with trainable_layers set, every batch needs frozen_states (cache_frozen_states)")
    set_seed(seed, num_threads=torch.get_num_threads())
    frozen = [] if trainable_layers is None else [
        *encoder.embeddings.parameters(),
        *(p for layer in encoder.layers[:encoder.config.num_layers - trainable_layers] for p in layer.parameters())]
    shared = {id(p): nn.Parameter(p.detach(), requires_grad=False) for p in frozen}   # same storage, no copy
    model = BertForTask(copy.deepcopy(encoder, shared), task, num_labels=len(TAGS) if task == "tagging" else 2,
                        pooling=pooling)
    if trainable_layers is not None:
        freeze_lower_layers(model, trainable_layers)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    for _ in range(epochs):
        fit(model, task_loss, rng.sample(train_batches, len(train_batches)), optimizer=optimizer, seed=None,
            progress=False)
        if tol is not None and evaluate_loss(model, task_loss, train_batches) < tol:
            break
    return model.eval()


@torch.no_grad()
def task_scores(model: BertForTask, batch: dict) -> dict[str, float]:
    """Scores on one batch: ``accuracy`` (pair, single); ``exact`` share and the ``overlap`` and
    ``elsewhere`` counts of :func:`span_error_kind` (qa); ``word accuracy`` and ``entity F1`` (tagging)."""
    check_type(model, "model", BertForTask)
    was_training = model.training
    model.eval()
    out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"], batch.get("frozen_states"))
    model.train(was_training)
    if model.task in ("pair", "single"):
        return {"accuracy": (out.argmax(-1) == batch["label"]).float().mean().item()}
    if model.task == "qa":
        s, e = best_span(*out, batch["context"])
        kinds = [span_error_kind(*x)
                 for x in zip(s.tolist(), e.tolist(), batch["start"].tolist(), batch["end"].tolist())]
        return {"exact": kinds.count("exact") / len(kinds), "overlap": kinds.count("overlap"),
                "elsewhere": kinds.count("elsewhere")}
    keep = batch["labels"] != IGNORE_INDEX                                   # first piece of each word
    pred = out.argmax(-1)
    gold_tags = [[TAGS[t] for t in row[k].tolist()] for row, k in zip(batch["labels"], keep)]
    pred_tags = [[TAGS[t] for t in row[k].tolist()] for row, k in zip(pred, keep)]
    return {"word accuracy": (pred[keep] == batch["labels"][keep]).float().mean().item(),
            "entity F1": entity_f1(gold_tags, pred_tags)}


# ---------------------------------------------------------------------------------------------
# Baselines that read no context
# ---------------------------------------------------------------------------------------------
def first_span_answer(example: QAExample) -> tuple[int, int]:
    """The trivial QA baseline: the span of the asked-for kind (city, job or name) in the passage's
    *first* sentence, whoever the question is about; word positions ``(start, end)``."""
    check_type(example, "example", QAExample)
    w = example.words
    end = w.index(".")                                   # the first sentence is w[0:end + 1]
    if example.question.startswith("where"):
        return 4, w.index("and") - 1                     # "<first> <last> lives in <city ...> and"
    if example.question.startswith("what"):
        return end - 1, end - 1                          # "... works as a <job> ."
    return 0, 1                                          # "<first> <last> lives in ..."


def word_tag_baseline(train: list[tuple[list[str], list[str]]], words: list[list[str]]) -> list[list[str]]:
    """The tagging baseline: each word gets the tag it had most often in ``train`` (ties: the tag seen
    first), ``O`` if it never occurred there."""
    check_nonempty(train, "train")
    counts: dict[str, dict[str, int]] = {}
    for ws, ts in train:
        for w, t in zip(ws, ts):
            counts.setdefault(w, {}).setdefault(t, 0)
            counts[w][t] += 1
    best = {w: max(c, key=c.get) for w, c in counts.items()}
    return [[best.get(w, "O") for w in ws] for ws in words]


def template_tag_rule(train: list[tuple[list[str], list[str]]], words: list[list[str]]) -> list[list[str]]:
    """A rule written for the tagging template, reading one word of context: a word seen in ``train``
    gets its most frequent tag (:func:`word_tag_baseline`); an unseen word right after an unseen entity
    word continues that entity (``I-``); any other unseen word begins the entity type (``B-``) that most
    often followed the word before it in ``train`` (``B-PER`` if none did)."""
    seen = word_tag_baseline(train, words)
    vocab = {w for ws, _ in train for w in ws}
    after: dict[str, dict[str, int]] = {}                       # previous word -> B- tag -> count
    for ws, ts in train:
        for prev, t in zip(["<s>", *ws], ts):
            if t.startswith("B-"):
                after.setdefault(prev, {}).setdefault(t, 0)
                after[prev][t] += 1
    out = []
    for ws, tags in zip(words, seen):
        row = []
        for k, (w, t) in enumerate(zip(ws, tags)):
            if w in vocab:
                row.append(t)
            elif k and ws[k - 1] not in vocab and row[-1] != "O":
                row.append("I-" + row[-1][2:])
            else:
                counts = after.get(ws[k - 1] if k else "<s>", {})
                row.append(max(counts, key=counts.get) if counts else "B-PER")
        out.append(row)
    return out
