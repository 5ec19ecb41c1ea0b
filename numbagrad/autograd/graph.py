"""Graph nodes (``Node``, a tensor's ``grad_fn``) and leaf accumulators.

They live in the core layer (``numbagrad._core.graph``, see NOTE [Graph layout]); this
module is their public home, as ``torch.autograd.graph`` is.
"""

from numbagrad._core.graph import AccumulateGrad, Node, OpNode

__all__ = ["AccumulateGrad", "Node", "OpNode"]
