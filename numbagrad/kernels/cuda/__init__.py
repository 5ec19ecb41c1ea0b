"""The CUDA backend (NOTE [Backends]): ``_driver`` (the only module importing numba.cuda),
``launch`` (the one launch helper), ``array`` (``CudaArray``, a strided view of a flat device
array), the ``@cuda.jit`` kernel modules ``elementwise``, ``reduce``, ``linalg``, ``index``
and ``sort``, and ``backend`` (the policy object registered under ``"cuda"``). Nothing here
imports numba.cuda until a CUDA tensor is made."""

__all__: list = []
