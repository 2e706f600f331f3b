"""Knowledge distillation (Hinton et al. 2015), the recipe behind DistilBERT and MiniLM.

A small student is trained to match a large teacher's softened distribution
p_i = softmax(z_i / T): at temperature T > 1 the teacher's "wrong" answers keep visible mass, and
how the teacher ranks them is the knowledge the hard label lacks.

    loss = alpha * T^2 * KL(p_teacher^T || p_student^T) + (1 - alpha) * CE(student, label)

The T^2 keeps the soft term's gradients on the scale of the hard term's as T changes.
"""
import torch
import torch.nn.functional as F

from lmcourse.validate import check_float, check_probability, check_type


def soft_targets(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(logits / T) over the last dimension."""
    check_type(logits, "logits", torch.Tensor)
    check_float(temperature, "temperature", minimum=0.0, strict_minimum=True)
    return (logits / temperature).softmax(dim=-1)


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                      temperature: float = 2.0, labels: torch.Tensor | None = None,
                      alpha: float = 0.5) -> torch.Tensor:
    """Soft-target KL at ``temperature`` (scaled by T^2), mixed with hard-label cross-entropy.

    logits: (N, V); labels: (N,) class ids or None (then the loss is the soft term alone).
    """
    check_type(student_logits, "student_logits", torch.Tensor)
    check_type(teacher_logits, "teacher_logits", torch.Tensor)
    if student_logits.shape != teacher_logits.shape or student_logits.dim() != 2:
        raise ValueError(f"student_logits and teacher_logits must both be (N, V), got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    check_float(temperature, "temperature", minimum=0.0, strict_minimum=True)
    check_probability(alpha, "alpha")
    T = temperature
    log_p_student = F.log_softmax(student_logits / T, dim=-1)             # (N, V)
    log_p_teacher = F.log_softmax(teacher_logits / T, dim=-1).detach()     # (N, V)
    # KL(p_t || p_s) = sum_i p_t,i (log p_t,i - log p_s,i), averaged over the N rows
    p_teacher = log_p_teacher.exp()
    # terms with p_t,i = 0 contribute 0 (also when a logit is -inf)
    kl = torch.where(p_teacher > 0, p_teacher * (log_p_teacher - log_p_student), 0.0).sum(-1).mean()
    if labels is None:
        return T * T * kl
    return alpha * T * T * kl + (1 - alpha) * F.cross_entropy(student_logits, labels)
