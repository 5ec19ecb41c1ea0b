"""Array-in, array-out JIT kernels. They know nothing about Tensor.

``kernels.cpu`` holds the ``@numba.njit(cache=True)`` kernels; CUDA kernels join as
``kernels.cuda`` behind the same names.
"""
