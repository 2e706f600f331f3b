"""A guard for the "write the backward pass by hand" exercises: autograd is refused while it is active."""
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
