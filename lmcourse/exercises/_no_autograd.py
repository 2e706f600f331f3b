"""For the "write the backward pass by hand" exercises: a guard that refuses autograd while the reader's
function runs, and the comparison of its gradients with autograd's."""
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from unittest.mock import patch

import torch
import torch.autograd.forward_ad
import torch.autograd.functional
import torch.func

#: every way to build or run a graph that a candidate could reach for (torch.func and the functional
#: and forward-mode APIs differentiate even under torch.no_grad())
_REFUSED = [(torch.Tensor, "backward"), (torch.autograd, "backward"), (torch.autograd, "grad"),
            (torch, "enable_grad"), (torch.autograd, "enable_grad"), (torch, "set_grad_enabled"),
            (torch.autograd, "set_grad_enabled"),
            *((torch.func, name) for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
                                               "hessian", "linearize")),
            *((torch.autograd.functional, name) for name in ("vjp", "jvp", "vhp", "hvp", "jacobian", "hessian")),
            (torch.autograd.forward_ad, "make_dual")]


@contextmanager
def refusing_autograd(name: str) -> Iterator[None]:
    """Run the block under ``torch.no_grad()`` with autograd's entry points replaced by a function that
    raises ``AssertionError`` saying that ``name`` called autograd."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} called autograd: write the gradients by hand, from the forward pass's "
                             "intermediate values")

    with torch.no_grad(), ExitStack() as stack:
        for owner, attribute in _REFUSED:
            stack.enter_context(patch.object(owner, attribute, refuse))
        yield


def assert_gradients_match(got, params: dict, where: str, hint: str) -> None:
    """``got``, the reader's {name: gradient}, against ``params`` {name: parameter with .grad}: same keys,
    shapes and values to 1e-5; ``where`` names the case (e.g. "(6 steps)"), ``hint`` says how to get it right."""
    keys = sorted(got) if isinstance(got, dict) else type(got).__name__
    assert isinstance(got, dict) and set(got) == set(params), (
        f"return a dict with the keys {sorted(params)}, got {keys}")
    for name, param in params.items():
        g = torch.as_tensor(got[name]).float()
        assert g.shape == param.shape, (
            f"d loss / d {name}: expected shape {tuple(param.shape)}, got {tuple(g.shape)}")
        assert torch.allclose(g, param.grad, atol=1e-5), (
            f"{where} d loss / d {name} differs from autograd's by up to {(g - param.grad).abs().max():.3g}. {hint}")
