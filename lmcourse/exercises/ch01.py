"""Checks for chapter 1's exercises."""
import torch
from torch import nn

from lmcourse.transfer import DigitsCNN, transfer_model

__all__ = ["count_trainable", "place_in_frame"]


def count_trainable(candidate) -> int:
    """``candidate(model) -> int``: the number of parameters the optimiser will update."""
    source = DigitsCNN(5)
    cases = {
        "a single nn.Linear(3, 2)": (nn.Linear(3, 2), 8),
        "a DigitsCNN(5)": (source, sum(p.numel() for p in source.parameters())),
        "a 'frozen' transfer model": (transfer_model(source, 5, "frozen"),
                                      sum(p.numel() for p in source.classifier.parameters())),
        "a 'fine-tuned' transfer model": (transfer_model(source, 5, "fine-tuned"),
                                          sum(p.numel() for p in source.parameters())),
    }
    shared = nn.Linear(4, 4)
    cases["a model using one layer twice"] = (nn.Sequential(shared, nn.ReLU(), shared), 20)
    for name, (model, expected) in cases.items():
        got = candidate(model)
        assert isinstance(got, int), f"return an int, got {type(got).__name__}"
        assert got == expected, (f"for {name} expected {expected} trainable parameters, got {got}. "
                                 "Count only parameters with requires_grad, and each tensor once.")
    return len(cases)


def place_in_frame(candidate) -> int:
    """``candidate(images, size, generator) -> frames``: each image pasted at a random position."""
    images = torch.rand(400, 1, 8, 8, generator=torch.Generator().manual_seed(0)) + 0.5   # no zeros
    frames = candidate(images, 10, torch.Generator().manual_seed(1))
    assert isinstance(frames, torch.Tensor), f"return a tensor, got {type(frames).__name__}"
    assert frames.shape == (400, 1, 10, 10), f"expected frames of shape (400, 1, 10, 10), got {tuple(frames.shape)}"
    positions = set()
    for image, frame in zip(images, frames):
        rows, cols = frame[0].nonzero(as_tuple=True)
        assert len(rows) == 64, "each frame must hold the whole 8x8 image and be blank (0) elsewhere"
        r, c = rows.min().item(), cols.min().item()
        assert torch.equal(frame[0, r:r + 8, c:c + 8], image[0]), "the pasted image must be the input image, unchanged"
        positions.add((r, c))
    assert len(positions) == 9, (f"in a 10x10 frame an 8x8 image fits at 9 positions; 400 images used only "
                                 f"{len(positions)}: is the last row or column of positions ever drawn?")
    return 4
