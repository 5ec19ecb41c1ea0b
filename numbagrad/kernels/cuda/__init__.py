"""The CUDA backend (NOTE [Backends]): ``_driver`` (the only module importing numba.cuda),
``launch`` (the one launch helper), ``array`` (``CudaArray``, a strided view of a flat device
array), the ``@cuda.jit`` kernel modules ``elementwise``, ``reduce``, ``linalg``, ``index``
and ``sort``, and ``backend`` (the policy object registered under ``"cuda"``): its core
(allocation, elementwise, sums, ``matmul``, the engine's buffers, NumPy's namespace ``xp``)
in ``backend.py`` and one mixin per kernel family in ``backend_reduce``, ``backend_index``,
``backend_random``, ``backend_special`` and ``backend_linalg`` (helpers they share:
``backend_common``). Nothing here imports numba.cuda until a CUDA tensor is made."""

__all__: list = []
