"""Checks for chapter 1's exercises."""
import torch

from lmcourse.transfer import DigitsCNN, transfer_model

__all__ = ["layerwise_groups", "place_in_frame"]


def layerwise_groups(candidate) -> int:
    """``candidate(model, lr, factor) -> groups``: AdamW parameter groups for a ``DigitsCNN`` in which
    the output layer learns at ``lr`` and each layer below at ``factor`` times less than the one
    above; frozen parameters are in no group."""
    torch.manual_seed(7)
    source = DigitsCNN(5, image_size=12)
    cases = [(DigitsCNN(5, image_size=12), 3e-3, 2.6), (transfer_model(source, 5, "frozen", layers=2), 1e-2, 2.0),
             (transfer_model(source, 5, "fine-tuned", layers=3), 3e-3, 2.6),
             (transfer_model(source, 5, "frozen", layers=3), 1e-3, 1.0)]
    for model, lr, factor in cases:
        case = f"lr={lr}, factor={factor}, {sum(not p.requires_grad for p in model.parameters())} frozen tensors"
        groups = candidate(model, lr, factor)
        assert isinstance(groups, list) and all(isinstance(g, dict) and {"params", "lr"} <= set(g) for g in groups), \
            "return a list of dicts, each with 'params' (a list of parameters) and 'lr'"
        layers = [model.classifier[-1], *reversed(model.hidden_layers())]          # top down: depth 0, 1, 2, 3
        names = ("output layer", "hidden linear layer", "second convolution", "first convolution")
        want = {id(p): (f"the {names[depth]}'s {name}", lr / factor ** depth) for depth, layer in enumerate(layers)
                for name, p in layer.named_parameters()}
        own = {id(p) for p in model.parameters()}
        seen = set()
        for g in groups:
            for p in g["params"]:
                assert id(p) in own, (f"{case}: a group holds a tensor that is not one of the model's parameters "
                                      "(a copy?): the optimiser would update the copy and never the model")
                name, rate = want[id(p)]
                assert id(p) not in seen, f"{case}: {name} is in two groups; put each parameter in exactly one"
                seen.add(id(p))
                assert p.requires_grad, f"{case}: {name} is frozen; frozen parameters belong in no group"
                assert abs(g["lr"] - rate) <= 1e-12 * rate, (
                    f"{case}: {name} learns at {g['lr']:.3g}, expected {rate:.3g}: the output layer at lr, "
                    "and each layer below at factor times less than the one above")
        missing = [want[id(p)][0] for p in model.parameters() if p.requires_grad and id(p) not in seen]
        assert not missing, f"{case}: trainable parameters in no group: {missing}"
    return len(cases)


def place_in_frame(candidate) -> int:
    """``candidate(images, size, generator) -> frames``: each image pasted at a random position."""
    n = 1800                                                    # 200 per position expected
    images = torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(0)) + 0.5     # no zeros
    frames = candidate(images, 10, torch.Generator().manual_seed(1))
    assert isinstance(frames, torch.Tensor), f"return a tensor, got {type(frames).__name__}"
    assert frames.shape == (n, 1, 10, 10), f"expected frames of shape ({n}, 1, 10, 10), got {tuple(frames.shape)}"

    def corners(frames):
        out = []
        for image, frame in zip(images, frames):
            rows, cols = frame[0].nonzero(as_tuple=True)
            assert len(rows) == 64, "each frame must hold the whole 8x8 image and be blank (0) elsewhere"
            r, c = rows.min().item(), cols.min().item()
            assert torch.equal(frame[0, r:r + 8, c:c + 8], image[0]), \
                "the pasted image must be the input image, unchanged"
            out.append((r, c))
        return out

    positions = corners(frames)
    assert len(set(positions)) == 9, (f"in a 10x10 frame an 8x8 image fits at 9 positions; {n} images used only "
                                      f"{len(set(positions))}: is the last row or column of positions ever drawn?")
    again = corners(candidate(images, 10, torch.Generator().manual_seed(1)))
    assert again == positions, "the same generator seed must give the same positions: draw them from `generator`"
    other = corners(candidate(images, 10, torch.Generator().manual_seed(2)))
    same = sum(a == b for a, b in zip(positions, other))
    assert same < n / 4, (f"a generator with another seed put {same} of {n} images at the same place (about {n // 9} "
                          "expected by chance): the positions must be random, drawn from `generator`, "
                          "not a fixed pattern")
    counts = torch.bincount(torch.tensor([3 * r + c for r, c in positions]), minlength=9).float()
    chi2 = float(((counts - n / 9) ** 2 / (n / 9)).sum())
    assert chi2 < 26.12, (f"the 9 positions were used {counts.int().tolist()} times by {n} images (about {n // 9} each "
                          f"expected; chi-square {chi2:.1f}, above 26.12, the 0.1% point with 8 degrees of freedom): "
                          "every position must be equally likely")
    return 5
