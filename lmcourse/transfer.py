"""Pretraining and transfer on images: a small CNN trained on some digits, reused for others.

Chapter 1's experiment: pretrain on digits 0-4, then learn digits 5-9 from a handful of labelled
examples, either from scratch, with the pretrained lower layers frozen, or fine-tuning them.
"""
import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.train import fit
from lmcourse.validate import check_int, check_nonempty, check_type

STRATEGIES = ("scratch", "frozen", "fine-tuned")


def load_digits_tensors() -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 handwritten digits: images (N, 1, 8, 8) scaled to [0, 1], labels (N,)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    return images, torch.tensor(digits.target, dtype=torch.long)


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions (the transferable ``features``) and a small ``classifier`` head.

    (B, 1, 8, 8) -conv-> (B, c1, 8, 8) -conv-> (B, c2, 8, 8) -pool-> (B, c2, 4, 4) -> (B, num_classes)
    """

    def __init__(self, num_classes: int, channels: tuple[int, int] = (8, 16), hidden: int = 64):
        super().__init__()
        check_int(num_classes, "num_classes", minimum=2)
        check_int(hidden, "hidden", minimum=1)
        if len(channels) != 2:
            raise ValueError(f"channels must hold 2 sizes, got {channels}")
        c1, c2 = channels
        check_int(c1, "channels[0]", minimum=1)
        check_int(c2, "channels[1]", minimum=1)
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(),      # edges and strokes
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(),     # combinations of strokes
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(c2 * 4 * 4, hidden), nn.ReLU(), nn.Linear(hidden, num_classes),
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if images.dim() != 4 or images.shape[1:] != (1, 8, 8):
            raise ValueError(f"images must be (batch, 1, 8, 8), got {tuple(images.shape)}")
        return self.classifier(self.features(images))


def transfer_model(source: DigitsCNN, num_classes: int, strategy: str, seed: int = 0) -> DigitsCNN:
    """A new model for ``num_classes`` classes whose lower layers come from ``source``.

    strategy: 'scratch' (nothing copied), 'frozen' (features copied and frozen: only the new head
    learns) or 'fine-tuned' (features copied and trained further together with the new head).
    """
    check_type(source, "source", DigitsCNN)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    torch.manual_seed(seed)
    c1 = source.features[0].out_channels
    c2 = source.features[2].out_channels
    model = DigitsCNN(num_classes, (c1, c2), source.classifier[1].out_features)
    if strategy != "scratch":
        model.features = copy.deepcopy(source.features)
    if strategy == "frozen":
        model.features.requires_grad_(False)
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


def train_classifier(model: nn.Module, images: torch.Tensor, labels: torch.Tensor,
                     num_epochs: int, lr: float = 3e-3, batch_size: int = 64,
                     test: tuple[torch.Tensor, torch.Tensor] | None = None, eval_every: int = 1,
                     seed: int = 0, device: str | torch.device = DEFAULT_DEVICE) -> list[float]:
    """Train with shuffled mini-batches; return the test accuracy after every ``eval_every``
    epochs (if ``test`` is given)."""
    check_int(num_epochs, "num_epochs", minimum=1)
    check_int(eval_every, "eval_every", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    check_nonempty(labels, "labels")
    generator = torch.Generator().manual_seed(seed)

    def epoch_batches(epoch):
        order = torch.randperm(len(labels), generator=generator)
        return [(images[order[i:i + batch_size]], labels[order[i:i + batch_size]])
                for i in range(0, len(labels), batch_size)]

    steps_per_epoch = -(-len(labels) // batch_size)
    eval_fn = None
    if test is not None:
        test_images, test_labels = (t.to(device) for t in test)
        eval_fn = lambda m: {"test_accuracy": accuracy(m, test_images, test_labels)}  # noqa: E731
    history = fit(model, cross_entropy_loss, epoch_batches, num_epochs=num_epochs, lr=lr,
                  eval_fn=eval_fn, eval_every=steps_per_epoch * eval_every, seed=seed, device=device,
                  desc=f"{num_epochs} epochs")
    return [v for _, v in history.evals.get("test_accuracy", [])]
