"""The CUDA backend (NOTE [Backends]): ``_driver`` (the only module importing numba.cuda),
``launch`` (the one launch helper), ``array`` (``CudaArray``, a strided view of a flat device
array), the ``@cuda.jit`` kernel modules ``elementwise``, ``reduce``, ``linalg``, ``index``
and ``sort``, and ``backend`` (the policy object registered under ``"cuda"``, and
``CudaNDArray``, the class of the arrays it makes): its core (allocation, sums, ``matmul``)
in ``backend.py`` and one mixin per kernel family in ``backend_elementwise``,
``backend_reduce``, ``backend_index``, ``backend_random``, ``backend_special`` and
``backend_linalg`` (helpers they share: ``backend_common``; NumPy's namespace ``xp`` and the
formula twins: ``backend_xp``). Nothing here imports numba.cuda until a CUDA tensor is
made."""

__all__: list = []
