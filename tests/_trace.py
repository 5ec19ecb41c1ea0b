"""Which primitives an op-database entry binds: a recording interpreter (NOTE
[Interpreters]) pushed over the eager one while the entry's samples run."""

from test_ops import Call

import numbagrad
from numbagrad._core import interpreter


class Recorder(interpreter.Interpreter):
    """Notes each primitive it sees, then lets the eager interpreter run it."""

    __slots__ = ("seen",)

    def __init__(self):
        super().__init__(interpreter.EVAL)
        self.seen = set()

    def process(self, prim, args, params):
        self.seen.add(prim.__name__)
        return prim._eval(args, params)


def trace(info, backward=True):
    """``(forward, all)``: the primitives bound by the forward over every sample, and those
    bound by the forward and a ``create_graph`` backward (whose rules bind primitives)."""
    forward, everything = set(), set()
    for sample in info.sample_inputs():
        rec = Recorder()
        token = interpreter._CURRENT.set(rec)
        try:
            call = Call(numbagrad, info, sample, requires_grad=info.supports_grad)
            outs = [o for o in call.float_outputs() if o.requires_grad]
            forward |= rec.seen
            if backward and outs:
                total = outs[0].sum()
                for o in outs[1:]:
                    total = total + o.sum()
                numbagrad.autograd.grad(total, call.leaves, create_graph=True, allow_unused=True)
        finally:
            interpreter._CURRENT.reset(token)
        everything |= rec.seen
    return forward, everything
