"""The core layer, below the ops: grad mode, the interpreter context and ``bind``, graph
nodes and saved values.

NOTE [Layers]
Each layer imports only from the layers below it::

    numbagrad/__init__                 public names
    autograd/, func/  (engine, Function, gradcheck, forward_ad; the transforms' API)
    _transforms/  (tracers and the forward-mode, vmap and func.grad interpreters)
    ops/       (primitives, composites, Tensor's method table)
    _core/     (grad_mode, interpreter, graph)
    _tensor, _dtype, _device, _creation
    kernels/   (device backends; array in, array out; know nothing of Tensor)

Two arrows point up, each late-bound and documented where it is made:
``_tensor._F`` (Tensor's methods, filled in by ``ops._methods``) and
``_core.graph.REFRESH_VIEW`` (re-deriving a stale view's history, set by ``ops.inplace``).
Nothing else imports upwards at module level.
"""

__all__: list = []
