"""AdamW written out: the optimiser of pretraining, SFT and every RL update (chapters 1 and 3).

AdamW (Loshchilov and Hutter 2019) keeps, for every weight, a running mean
of its gradient (``exp_avg``, Adam's first moment) and of its square
(``exp_avg_sq``, the second), and moves the weight by the first over the
square root of the second: a step of about the learning rate whatever the
gradient's scale. The weight decay shrinks each weight apart from the
gradient ("decoupled").

:class:`AdamW` lays a model's weights end to end in one vector, so that a
step is a handful of operations on that vector however many weight tensors
the model has. It computes ``torch.optim.AdamW``'s update (the tests compare
the two) without PyTorch's optimiser machinery, whose first use in a process
imports PyTorch's compiler, 0.8 s of every worker's start.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, cast

import torch


class AdamW:
    """AdamW over one flat vector of weights.

    Each parameter becomes a view of its slice of the vector (so the
    parameters passed in are updated in place, as with any optimiser).
    ``param_groups[0]["lr"]`` is the learning rate, which a schedule may
    change between steps, as with ``torch.optim``.
    """

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        self.params = list(params)
        if not self.params:
            raise ValueError("AdamW needs at least one parameter")
        if not lr >= 0 or not 0 <= betas[0] < 1 or not 0 <= betas[1] < 1 or not eps > 0 or not weight_decay >= 0:
            raise ValueError(f"invalid AdamW settings: lr={lr}, betas={betas}, eps={eps}, weight_decay={weight_decay}")
        self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
        start = 0
        for p in self.params:
            p.data = self.flat[start : start + p.numel()].view_as(p)
            start += p.numel()
        self.param_groups: list[dict[str, Any]] = [
            {"params": self.params, "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        ]
        self.steps = 0
        self.exp_avg = torch.zeros_like(self.flat)
        self.exp_avg_sq = torch.zeros_like(self.flat)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (``set_to_none=False`` zeroes it in place instead)."""
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def gradient(self) -> torch.Tensor:
        """The parameters' gradients, end to end in one vector."""
        missing = [i for i, p in enumerate(self.params) if p.grad is None]
        if missing:
            raise RuntimeError(f"parameters {missing} have no gradient; call backward() before step()")
        return torch.cat([cast(torch.Tensor, p.grad).reshape(-1) for p in self.params])  # none missing, checked above

    @torch.no_grad()
    def step(self) -> None:
        """One AdamW step from the parameters' current gradients."""
        if self.params[0].data_ptr() != self.flat.data_ptr():
            raise RuntimeError("these weights have been handed to another optimiser since this one was made")
        group = self.param_groups[0]
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        grad = self.gradient()
        self.steps += 1
        self.flat.mul_(1 - lr * group["weight_decay"])
        self.exp_avg.lerp_(grad, 1 - beta1)
        self.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (self.exp_avg_sq.sqrt() / math.sqrt(1 - beta2**self.steps)).add_(eps)
        self.flat.addcdiv_(self.exp_avg, denom, value=-lr / (1 - beta1**self.steps))

    def state_dict(self) -> dict:
        """The step count, both moments (copies) and the settings: what :meth:`load_state_dict` takes back."""
        settings = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return {
            "steps": self.steps,
            "exp_avg": self.exp_avg.clone(),
            "exp_avg_sq": self.exp_avg_sq.clone(),
            "settings": settings,
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue from a :meth:`state_dict` of an AdamW over parameters of the same shapes."""
        if state["exp_avg"].shape != self.flat.shape:
            raise ValueError(f"the state holds {state['exp_avg'].numel()} weights, this optimiser {self.flat.numel()}")
        self.steps = int(state["steps"])
        self.exp_avg.copy_(state["exp_avg"])
        self.exp_avg_sq.copy_(state["exp_avg_sq"])
        self.param_groups[0].update(state["settings"])
