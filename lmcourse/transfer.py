"""Pretraining and transfer on images: a small CNN trained on some digits, reused for others.

Chapter 1's experiment: pretrain on digits 0-4, then learn digits 5-9 from a handful of labelled
examples, either from scratch, with the pretrained lower layers frozen, or fine-tuning them; on the
8x8 digits as scanned, and on a harder task where each digit sits anywhere in a larger frame.
"""
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.train import fit
from lmcourse.validate import check_float, check_int, check_nonempty, check_type

STRATEGIES = ("scratch", "frozen", "fine-tuned")


def load_digits_tensors() -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 handwritten digits: images (N, 1, 8, 8) scaled to [0, 1], labels (N,)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    return images, torch.tensor(digits.target, dtype=torch.long)


def place_in_frame(images: torch.Tensor, size: int, generator: torch.Generator) -> torch.Tensor:
    """Each (N, 1, h, w) image pasted at a random position of a blank (N, 1, size, size) frame."""
    check_type(images, "images", torch.Tensor)
    if images.dim() != 4 or images.shape[1] != 1:
        raise ValueError(f"images must be (batch, 1, height, width), got {tuple(images.shape)}")
    n, _, h, w = images.shape
    check_int(size, "size", minimum=max(h, w))
    rows = torch.randint(0, size - h + 1, (n,), generator=generator)
    cols = torch.randint(0, size - w + 1, (n,), generator=generator)
    frames = images.new_zeros(n, 1, size, size)
    r = (rows[:, None] + torch.arange(h))[:, :, None]                  # (N, h, 1): each image's rows
    c = (cols[:, None] + torch.arange(w))[:, None, :]                  # (N, 1, w): and its columns
    frames[torch.arange(n)[:, None, None], 0, r, c] = images[:, 0]
    return frames


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions (the ``features``) and a ``classifier``: a hidden layer and the output.

    (B, 1, S, S) -conv-> (B, c1, S, S) -conv-> (B, c2, S, S) -pool-> (B, c2, S/2, S/2)
    -flatten, linear-> (B, hidden) -linear-> (B, num_classes), with S = ``image_size``.
    """

    def __init__(self, num_classes: int, channels: tuple[int, int] = (8, 16), hidden: int = 64,
                 image_size: int = 8):
        super().__init__()
        check_int(num_classes, "num_classes", minimum=2)
        check_int(hidden, "hidden", minimum=1)
        check_int(image_size, "image_size", minimum=2)
        if image_size % 2:
            raise ValueError(f"image_size must be even (the pool halves it), got {image_size}")
        if len(channels) != 2:
            raise ValueError(f"channels must hold 2 sizes, got {channels}")
        c1, c2 = channels
        check_int(c1, "channels[0]", minimum=1)
        check_int(c2, "channels[1]", minimum=1)
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(),      # 3x3 patterns: pieces of strokes
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(),     # combinations of them
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(c2 * (image_size // 2) ** 2, hidden), nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )
        self.image_size = image_size
        self.copied_layers = 0              # how many of the hidden layers transfer_model copied

    def hidden_layers(self) -> list[nn.Module]:
        """The layers below the output, bottom up: conv, conv, hidden linear (what can transfer)."""
        return [self.features[0], self.features[2], self.classifier[1]]

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if images.dim() != 4 or images.shape[1:] != (1, self.image_size, self.image_size):
            raise ValueError(f"images must be (batch, 1, {self.image_size}, {self.image_size}), "
                             f"got {tuple(images.shape)}")
        return self.classifier(self.features(images))


def transfer_model(source: DigitsCNN, num_classes: int, strategy: str, seed: int = 0,
                   layers: int = 2) -> DigitsCNN:
    """A new model for ``num_classes`` classes whose lower ``layers`` come from ``source``.

    strategy: 'scratch' (nothing copied), 'frozen' (the lower ``layers`` of ``source.hidden_layers()``
    copied and frozen) or 'fine-tuned' (copied and trained further with the rest). ``layers=2``
    copies the two convolutions; ``layers=3`` also the hidden linear layer (all but the output).
    """
    check_type(source, "source", DigitsCNN)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    check_int(layers, "layers", minimum=1, maximum=3)
    torch.manual_seed(seed)
    c1 = source.features[0].out_channels
    c2 = source.features[2].out_channels
    model = DigitsCNN(num_classes, (c1, c2), source.classifier[1].out_features, source.image_size)
    if strategy == "scratch":
        return model
    for mine, theirs in zip(model.hidden_layers()[:layers], source.hidden_layers()):
        mine.load_state_dict(theirs.state_dict())                # copies the values
        mine.requires_grad_(strategy == "fine-tuned")
    model.copied_layers = layers
    return model


def cross_entropy_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Mean cross-entropy of ``model(images)`` against ``labels`` for a batch ``(images, labels)``."""
    images, labels = batch
    return F.cross_entropy(model(images), labels)


@torch.no_grad()
def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of ``images`` whose most probable class is ``labels``."""
    was_training = model.training
    model.eval()
    acc = (model(images).argmax(dim=-1) == labels).float().mean().item()
    model.train(was_training)
    return acc


def few_shot_split(labels: torch.Tensor, shots: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices of ``shots`` training examples per class and of all the remaining examples."""
    check_type(labels, "labels", torch.Tensor)
    check_int(shots, "shots", minimum=1)
    rng = np.random.default_rng(seed)
    train = []
    for c in labels.unique().tolist():
        idx = (labels == c).nonzero().squeeze(1).numpy()
        if len(idx) <= shots:
            raise ValueError(f"shots={shots} leaves no test example of class {c} ({len(idx)} examples)")
        train.extend(rng.choice(idx, shots, replace=False).tolist())
    mask = torch.zeros(len(labels), dtype=torch.bool)
    mask[train] = True
    return mask.nonzero().squeeze(1), (~mask).nonzero().squeeze(1)


def copied_lr_groups(model: DigitsCNN, lr: float, copied_lr: float) -> list[dict]:
    """The optimiser's parameter groups: the layers ``transfer_model`` copied learn at ``copied_lr``,
    the rest at ``lr``; frozen parameters are in no group."""
    check_type(model, "model", DigitsCNN)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    check_float(copied_lr, "copied_lr", minimum=0.0, strict_minimum=True)
    copied = {id(p) for layer in model.hidden_layers()[:model.copied_layers] for p in layer.parameters()}
    trainable = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in trainable if id(p) not in copied], "lr": lr},
              {"params": [p for p in trainable if id(p) in copied], "lr": copied_lr}]
    return [g for g in groups if g["params"]]


def train_classifier(model: nn.Module, images: torch.Tensor, labels: torch.Tensor,
                     num_epochs: int, lr: float = 3e-3, batch_size: int = 64,
                     test: tuple[torch.Tensor, torch.Tensor] | None = None, eval_every: int = 1,
                     seed: int = 0, copied_lr: float | None = None,
                     augment: Callable[[torch.Tensor, torch.Generator], torch.Tensor] | None = None,
                     device: str | torch.device = DEFAULT_DEVICE) -> list[float]:
    """Train with shuffled mini-batches; return the test accuracy after every ``eval_every``
    epochs (if ``test`` is given).

    copied_lr: a learning rate for the layers that ``transfer_model`` copied (a lower one keeps
    them near their pretrained values); the rest learn at ``lr`` (see ``copied_lr_groups``).
    The optimiser is AdamW, without weight decay.
    augment: ``(images, generator) -> images``, applied to every batch (e.g. ``place_in_frame``).
    """
    check_int(num_epochs, "num_epochs", minimum=1)
    check_int(eval_every, "eval_every", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    check_nonempty(labels, "labels")
    generator = torch.Generator().manual_seed(seed)

    def epoch_batches(epoch):
        order = torch.randperm(len(labels), generator=generator)
        batches = [(images[order[i:i + batch_size]], labels[order[i:i + batch_size]])
                   for i in range(0, len(labels), batch_size)]
        return batches if augment is None else [(augment(x, generator), y) for x, y in batches]

    optimizer = None
    if copied_lr is not None:
        optimizer = torch.optim.AdamW(copied_lr_groups(model, lr, copied_lr), weight_decay=0.0)

    steps_per_epoch = -(-len(labels) // batch_size)
    eval_fn = None
    if test is not None:
        test_images, test_labels = (t.to(device) for t in test)
        eval_fn = lambda m: {"test_accuracy": accuracy(m, test_images, test_labels)}  # noqa: E731
    history = fit(model, cross_entropy_loss, epoch_batches, num_epochs=num_epochs, lr=lr,
                  optimizer=optimizer, eval_fn=eval_fn, eval_every=steps_per_epoch * eval_every, seed=seed,
                  device=device, desc=f"{num_epochs} epochs")
    return [v for _, v in history.evals.get("test_accuracy", [])]
