"""Chapter 1's CNN, transfer strategies, few-shot splits and the exercise checker."""
import pytest
import torch

from lmcourse.exercises import check
from lmcourse.transfer import (
    DigitsCNN,
    accuracy,
    copied_lr_groups,
    few_shot_split,
    load_digits_tensors,
    place_in_frame,
    train_classifier,
    transfer_model,
)


def test_digits_load_as_unit_range_images():
    images, labels = load_digits_tensors()
    assert images.shape == (1797, 1, 8, 8) and labels.shape == (1797,)
    assert images.min() == 0 and images.max() == 1


def test_cnn_shapes_and_validation():
    model = DigitsCNN(5)
    assert model(torch.zeros(3, 1, 8, 8)).shape == (3, 5)
    with pytest.raises(ValueError, match=r"images must be \(batch, 1, 8, 8\)"):
        model(torch.zeros(3, 8, 8))
    with pytest.raises(ValueError, match="num_classes must be >= 2"):
        DigitsCNN(1)


def test_transfer_strategies():
    source = DigitsCNN(5)
    scratch = transfer_model(source, 3, "scratch")
    frozen = transfer_model(source, 3, "frozen")
    tuned = transfer_model(source, 3, "fine-tuned")
    w = source.features[0].weight
    assert not torch.equal(scratch.features[0].weight, w)
    assert torch.equal(frozen.features[0].weight, w) and torch.equal(tuned.features[0].weight, w)
    assert frozen.features[0].weight is not w  # a copy, not shared
    assert not any(p.requires_grad for p in frozen.features.parameters())
    assert all(p.requires_grad for p in tuned.parameters())
    assert frozen.classifier[-1].out_features == 3
    with pytest.raises(ValueError, match="strategy must be one of"):
        transfer_model(source, 3, "partial")
    with pytest.raises(TypeError, match="source must be DigitsCNN"):
        transfer_model(torch.nn.Linear(2, 2), 3, "frozen")


def test_few_shot_split():
    labels = torch.tensor([0, 0, 0, 1, 1, 1, 1])
    train, test = few_shot_split(labels, 2, seed=0)
    assert torch.bincount(labels[train]).tolist() == [2, 2]
    assert sorted(train.tolist() + test.tolist()) == list(range(7))
    with pytest.raises(ValueError, match="leaves no test example"):
        few_shot_split(labels, 3)


def test_training_learns_digits_quickly():
    images, labels = load_digits_tensors()
    keep = labels < 3
    images, labels = images[keep], labels[keep]
    test, train = few_shot_split(labels, 20)
    model = DigitsCNN(3)
    curve = train_classifier(model, images[train], labels[train], num_epochs=3,
                             test=(images[test], labels[test]))
    assert len(curve) == 3
    assert curve[-1] == accuracy(model, images[test], labels[test]) > 0.9


def _layerwise(model, lr, factor):
    layers = [*model.hidden_layers(), model.classifier[-1]]
    groups = [{"params": [p for p in layer.parameters() if p.requires_grad], "lr": lr / factor ** depth}
              for depth, layer in enumerate(reversed(layers))]
    return [g for g in groups if g["params"]]


def test_exercise_checker_accepts_right_and_rejects_wrong():
    right = _layerwise
    assert check("ch01-layerwise-groups", right) == "ch01-layerwise-groups: all 4 checks passed"
    copies = lambda m, lr, f: [{"params": [p.detach().clone().requires_grad_() for p in g["params"]],  # noqa: E731
                                "lr": g["lr"]} for g in _layerwise(m, lr, f)]
    with pytest.raises(AssertionError, match="not one of the model's parameters"):
        check("ch01-layerwise-groups", copies)
    upside_down = lambda m, lr, f: _layerwise(m, lr, 1 / f)  # noqa: E731
    with pytest.raises(AssertionError, match="expected"):
        check("ch01-layerwise-groups", upside_down)
    with_frozen = lambda m, lr, f: [{"params": list(m.parameters()), "lr": lr}]  # noqa: E731
    with pytest.raises(AssertionError, match="frozen parameters belong in no group|expected"):
        check("ch01-layerwise-groups", with_frozen)
    twice = lambda m, lr, f: _layerwise(m, lr, f) + _layerwise(m, lr, f)[:1]  # noqa: E731
    with pytest.raises(AssertionError, match="in two groups"):
        check("ch01-layerwise-groups", twice)
    no_output = lambda m, lr, f: _layerwise(m, lr, f)[1:]  # noqa: E731
    with pytest.raises(AssertionError, match="in no group"):
        check("ch01-layerwise-groups", no_output)
    with pytest.raises(ValueError, match="is unknown"):
        check("ch01-nothing", right)
    with pytest.raises(ValueError, match="has no exercise checks"):
        check("ch99-x", right)
    with pytest.raises(ValueError, match="must look like"):
        check("count", right)


def test_transferred_layers_hold_copies_not_the_source_tensors():
    source = DigitsCNN(5)
    for strategy in ("frozen", "fine-tuned"):
        model = transfer_model(source, 5, strategy, layers=3)
        ours = {p.untyped_storage().data_ptr() for p in model.parameters()}
        assert not ours & {p.untyped_storage().data_ptr() for p in source.parameters()}
        before = source.features[0].weight.detach().clone()
        with torch.no_grad():
            model.features[0].weight.add_(1.0)
        assert torch.equal(source.features[0].weight, before)


def test_copied_lr_groups_split_the_trainable_parameters():
    source = DigitsCNN(5)
    groups = copied_lr_groups(transfer_model(source, 5, "fine-tuned", layers=2), 3e-3, 1e-4)
    assert [g["lr"] for g in groups] == [3e-3, 1e-4] and [len(g["params"]) for g in groups] == [4, 4]
    frozen = copied_lr_groups(transfer_model(source, 5, "frozen", layers=2), 3e-3, 1e-4)
    assert [g["lr"] for g in frozen] == [3e-3] and len(frozen[0]["params"]) == 4
    with pytest.raises(ValueError, match="copied_lr"):
        copied_lr_groups(source, 3e-3, 0.0)


def test_place_in_frame_pastes_each_image_whole_at_every_possible_position():
    images = torch.arange(1, 2 * 64 + 1, dtype=torch.float32).reshape(2, 1, 8, 8)
    frames = place_in_frame(images.repeat(100, 1, 1, 1), 10, torch.Generator().manual_seed(0))
    assert frames.shape == (200, 1, 10, 10)
    assert torch.equal(frames.sum((1, 2, 3)), images.repeat(100, 1, 1, 1).sum((1, 2, 3)))
    corners = {tuple(f[0].nonzero().min(0).values.tolist()) for f in frames}
    assert corners == {(r, c) for r in range(3) for c in range(3)}
    assert check("ch01-place-in-frame", place_in_frame) == "ch01-place-in-frame: all 5 checks passed"
    cycling = lambda x, s, g: torch.stack([torch.nn.functional.pad(im, (i % 3, 2 - i % 3, i // 3 % 3, 2 - i // 3 % 3))  # noqa: E731
                                           for i, im in enumerate(x)])
    with pytest.raises(AssertionError, match="must be random"):
        check("ch01-place-in-frame", cycling)
    def biased(x, size, generator):                    # random, but the top-left corner twice as likely
        weights = torch.ones(9)
        weights[0] = 2
        where = torch.multinomial(weights, len(x), replacement=True, generator=generator)
        return torch.stack([torch.nn.functional.pad(im, (i % 3, 2 - i % 3, i // 3, 2 - i // 3))
                            for i, im in zip(where.tolist(), x)])
    with pytest.raises(AssertionError, match="equally likely"):
        check("ch01-place-in-frame", biased)
    off_by_one = lambda x, s, g: torch.nn.functional.pad(place_in_frame(x, s - 1, g), (0, 1, 0, 1))  # noqa: E731
    with pytest.raises(AssertionError, match="9 positions"):
        check("ch01-place-in-frame", off_by_one)
    with pytest.raises(ValueError, match="images must be"):
        place_in_frame(torch.zeros(3, 8, 8), 10, torch.Generator())
    with pytest.raises(ValueError, match="size must be >= 8"):
        place_in_frame(images, 6, torch.Generator())


def test_transfer_copies_the_lowest_layers_and_trains_copies_at_their_own_rate():
    source = DigitsCNN(5, image_size=12)
    for layers in (1, 2, 3):
        model = transfer_model(source, 3, "frozen", layers=layers)
        copied = model.hidden_layers()[:layers]
        assert all(torch.equal(m.weight, s.weight) for m, s in zip(copied, source.hidden_layers()))
        assert not any(p.requires_grad for m in copied for p in m.parameters())
        assert all(p.requires_grad for m in model.hidden_layers()[layers:] for p in m.parameters())
        assert model.copied_layers == layers
    assert transfer_model(source, 3, "scratch").copied_layers == 0
    with pytest.raises(ValueError, match="layers must be <= 3"):
        transfer_model(source, 3, "frozen", layers=4)
    images, labels = torch.rand(10, 1, 12, 12), torch.arange(10) % 3
    tuned = transfer_model(source, 3, "fine-tuned", layers=2)
    before = [m.weight.detach().clone() for m in tuned.hidden_layers()]
    train_classifier(tuned, images, labels, num_epochs=1, batch_size=10, copied_lr=1e-12)
    after = [m.weight.detach() for m in tuned.hidden_layers()]
    assert torch.allclose(before[0], after[0], atol=1e-9) and torch.allclose(before[1], after[1], atol=1e-9)
    assert not torch.allclose(before[2], after[2])        # the hidden layer was not copied: full rate
    with pytest.raises(ValueError, match="image_size must be even"):
        DigitsCNN(3, image_size=9)
