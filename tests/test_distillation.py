import pytest
import torch
import torch.nn.functional as F

from lmcourse.distillation import distillation_loss, soft_targets


def test_soft_targets_flatten_with_temperature():
    logits = torch.tensor([[4.0, 1.0, 0.0]])
    assert soft_targets(logits, 5.0)[0, 0] < soft_targets(logits, 1.0)[0, 0]
    torch.testing.assert_close(soft_targets(logits, 1.0), logits.softmax(-1))


def test_matches_torch_kl_div():
    s, t = torch.randn(6, 10), torch.randn(6, 10)
    T = 3.0
    reference = F.kl_div(F.log_softmax(s / T, -1), F.log_softmax(t / T, -1), log_target=True,
                         reduction="batchmean") * T * T
    torch.testing.assert_close(distillation_loss(s, t, T), reference, atol=1e-6, rtol=1e-6)
    labels = torch.randint(10, (6,))
    mixed = distillation_loss(s, t, T, labels, alpha=0.3)
    torch.testing.assert_close(mixed, 0.3 * reference + 0.7 * F.cross_entropy(s, labels),
                               atol=1e-6, rtol=1e-6)


def test_zero_when_student_equals_teacher_and_no_teacher_gradient():
    t = torch.randn(4, 5, requires_grad=True)
    loss = distillation_loss(t.detach().clone().requires_grad_(), t, 2.0)
    assert loss.abs() < 1e-6
    loss.backward()
    assert t.grad is None


def test_bad_inputs():
    with pytest.raises(ValueError, match="temperature"):
        soft_targets(torch.zeros(3), 0.0)
    with pytest.raises(ValueError, match="student_logits"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="alpha"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 3), alpha=2.0)


def test_teacher_with_impossible_classes():
    teacher = torch.tensor([[2.0, float("-inf"), 0.0]])
    assert distillation_loss(teacher, teacher, 2.0).abs() < 1e-6
    assert torch.isfinite(distillation_loss(torch.zeros(1, 3), teacher, 2.0))
