"""Checks for chapter 1's exercises."""
from torch import nn

from lmcourse.transfer import DigitsCNN, transfer_model

__all__ = ["count_trainable"]


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
