"""The core layer, below the ops: grad mode, the interpreter context and ``bind``, graph
nodes and saved values, and the extension points through which the lower layers call up.

NOTE [Layers]
Each layer imports only from the layers below it::

    numbagrad/__init__                 public names
    autograd/, func/  (engine, Function, gradcheck, forward_ad; the transforms' API)
    _transforms/  (tracers and the forward-mode, vmap and func.grad interpreters)
    ops/       (primitives, composites, Tensor's method table)
    _core/     (grad_mode, interpreter, graph)
    _tensor, _dtype, _device, _creation
    kernels/   (device backends; array in, array out; know nothing of Tensor)
    _core/extension, _core/grad_mode, _hooks  (import nothing of numbagrad above them)

No import points up, at module level or inside a function. The calls that must go up are
the eight entries of ``_core/extension.py`` (NOTE [Extension points]): the op namespace
``OPS`` (``_tensor._F``: Tensor's methods, filled by ``ops._methods``) and ``HOOKS.backward``
(the engine), ``birth`` and ``func_transform`` (``_transforms.tracer``), ``random``,
``random_op`` and ``batched_like`` (``_transforms.batching``), ``refresh_view``
(``ops.inplace``), each filled by one ``register`` call of the module that provides it.
The switches the autograd API turns (saved-tensor hooks, anomaly mode) are
``extension.RECORDING`` (NOTE [Recording options]), read by ``Primitive._eval`` and the
engine. Two other kinds of assignment reach across modules, both named in
``tests/test_layers.py``: the Tensor method table (``ops._methods`` and ``_creation``'s random
methods set attributes of ``Tensor``) and the profiler's timing wrappers, installed only
while a profile runs (NOTE [Profiler]). Imports inside functions are limited to the loader
of the optional CUDA engine (NOTE [Optional engines] in ``kernels/__init__.py``), the
workload tool ``_observe``, and one cycle inside the CUDA engine (its driver installs the
memory pool when it loads numba.cuda), listed in ``tests/test_layers.py``, which fails on
any other. ``CudaArray`` reaches its backend through the loader (``kernels.backend``).
"""

__all__: list = []
