"""Forward-mode AD tutorial: dual numbers with ``forward_ad.dual_level``, ``make_dual`` /
``unpack_dual``, a custom Function with ``jvp``, and Jacobian columns built from JVPs."""

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD


class MySquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = foo**2
        ctx.save_for_backward(foo)
        ctx.foo = foo  # the jvp reads it from ctx, as in the tutorial
        return result

    @staticmethod
    def backward(ctx, gO):
        (foo,) = ctx.saved_tensors
        return gO * 2 * foo

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * 2 * ctx.foo
        del ctx.foo
        return gO


def fn(x, y):
    return (x**2).sin() + y.exp() * x


def main():
    rng = np.random.default_rng(17)
    primal = torch.from_numpy(rng.normal(size=(3, 4)))
    tangent = torch.from_numpy(rng.normal(size=(3, 4)))
    y = torch.from_numpy(rng.normal(size=(3, 4)))
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input, y)
        jvp = fwAD.unpack_dual(dual_output).tangent
        sq = MySquare.apply(fwAD.make_dual(primal, tangent))
        sq_t = fwAD.unpack_dual(sq).tangent
        # Jacobian of a map R^3 -> R^3 column by column
        w = torch.from_numpy(rng.normal(size=(3, 3)))
        x0 = torch.from_numpy(rng.normal(size=3))
        cols = []
        for i in range(3):
            d = fwAD.make_dual(x0, torch.eye(3)[i])
            cols.append(fwAD.unpack_dual(torch.tanh(w @ d)).tangent)
        jac = torch.stack(cols, dim=1)
    jac_ref = torch.autograd.functional.jacobian(lambda v: torch.tanh(w @ v), x0)
    return {"jvp": jvp, "sq_tangent": sq_t, "jac": jac, "jac_ref": jac_ref}
