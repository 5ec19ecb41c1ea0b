"""The backend interface (NOTE [Backends]) written down: ``Backend``, the ``typing.Protocol``
of the primitive-level methods every device backend implements.

NOTE [Backend protocol]
Ops reach a device only through the backend object their ``impl`` receives (``be``) or the
one that ran the forward (``ctx.be``), and only through the names listed here: the array
namespace ``xp`` (NumPy's names and semantics), the derivative-formula twins ``math``, and
the policy and family methods below. No op compares a backend's ``name`` with a device
name, calls ``np.linalg`` or imports a device's kernel package (``tests/test_layers.py``
checks ``numbagrad/ops/``), so a third backend (a NumPy-only reference, another device)
is added by implementing this protocol and calling ``register_backend``, with no edit to
``ops/``. Each backend module declares its backend against the protocol
(``_CHECK: Backend = CPU``), which mypy checks: a missing method or a changed signature
fails the type check, not a user's program.

The methods come in families:

- allocation and ownership: ``owns``, ``empty``, ``zeros``, and for the factories
  (``_creation.py``, through ``_device.on_device``/``empty_on``) ``from_host`` and
  ``empty_on``;
- elementwise policy: ``map``, ``binary``, ``binary_into``, ``copy_into``, ``multiply``,
  ``divide``, ``outer``, ``unary_backward``, ``mul_backward``;
- reductions: ``sum``, ``expand_back``;
- indices: ``first_out_of_range``;
- the engine's gradient buffers: ``add_grads``, ``accumulate``;
- special functions (``numbagrad.special``): ``special_unary``, ``special_binary``;
- linear algebra (``numbagrad.linalg``'s forwards, failures as ``LinAlgError`` with
  PyTorch's messages): ``inv``, ``solve``, ``solve_triangular``, ``cholesky``, ``det``,
  ``slogdet``, ``eigh``, ``svd``, ``qr``, ``matrix_exp``, and ``det_backward`` (a fused
  VJP of ``det``, or None: the op then runs its composite rule);
- spectral: ``fft``, NumPy's ``np.fft`` namespace for the device's arrays, or None where
  the device has no FFTs (the ops then raise NotImplementedError naming the op).

A method may raise ``NotImplementedError`` naming the op for a dtype or an operation a
device does not support (docs/gpu.rst lists CUDA's); it never returns a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Backend"]

Array = Any  # a backend's own array type (``np.ndarray``, ``CudaArray``)
Shape = tuple[int, ...]


class Backend(Protocol):
    """What a device backend provides to the ops (NOTE [Backend protocol])."""

    # -- identity and namespaces --------------------------------------------------------------
    @property
    def name(self) -> str:
        """The device type (``"cpu"``): names the device; ops never compare it."""
        ...

    @property
    def xp(self) -> Any:
        """The array namespace (NumPy's names and semantics)."""
        ...

    @property
    def math(self) -> Any:
        """The array twins of the derivative formulas' ops (``exp``, ``where``, ...)."""
        ...

    @property
    def fft(self) -> Any:
        """NumPy's ``fft`` namespace for this backend's arrays, or None (no FFTs)."""
        ...

    @property
    def KERNEL_MIN(self) -> int:  # noqa: N802  (the backends' constant)
        """Elements from which a fused kernel runs (0: every size)."""
        ...

    @property
    def PARALLEL_MIN(self) -> int:  # noqa: N802
        ...

    @property
    def THREAD_MIN(self) -> int:  # noqa: N802
        ...

    # -- allocation ------------------------------------------------------------------------------
    def owns(self, array: Any) -> bool:
        """Whether ``array`` is one of this backend's arrays (``backend_of`` asks)."""
        ...

    def empty(self, shape: Any, dtype: Any) -> Array: ...

    def zeros(self, shape: Any, dtype: Any) -> Array: ...

    def from_host(self, host: Any, device_index: int | None = None) -> Array:
        """The NumPy array ``host`` as this backend's array (the factories' way onto a
        device, ``_device.on_device``): the CPU's is ``host`` itself; a device copies it
        once, to device ``device_index``, which must be the current one."""
        ...

    def empty_on(self, shape: Any, dtype: Any, device_index: int | None = None) -> Array:
        """An uninitialised array on device ``device_index`` (checked as ``from_host``)."""
        ...

    # -- elementwise -----------------------------------------------------------------------------
    def map(self, name: str, x: Array) -> Array:
        """The elementwise map ``name`` (``"exp"``, ``"softplus"``, ...) of ``x``."""
        ...

    def binary(self, name: str, a: Any, b: Any) -> Array:
        """The broadcasting binary op ``name`` (NumPy's ufunc names) of arrays or scalars."""
        ...

    def binary_into(self, name: str, dst: Array, other: Any) -> None: ...

    def copy_into(self, dst: Array, src: Any) -> None: ...

    def multiply(self, a: Any, b: Any) -> Array: ...

    def divide(self, a: Any, b: Any) -> Array: ...

    def outer(self, a: Array, b: Array) -> Array: ...

    def unary_backward(
        self, kernel: str | None, g: Array, s: Array, derivative: Callable[..., Any]
    ) -> Array: ...

    def mul_backward(
        self, g: Array, a: Any, b: Any, need_a: bool, need_b: bool
    ) -> tuple[Array | None, Array | None]: ...

    # -- reductions ------------------------------------------------------------------------------
    def sum(self, x: Array, dims: Any, keepdim: bool, dtype: Any) -> Array: ...

    def expand_back(self, g: Array, shape: Shape, dims: Any, keepdim: bool) -> Array: ...

    # -- indices ---------------------------------------------------------------------------------
    def first_out_of_range(self, idx: Array, size: int) -> int: ...

    # -- the engine's gradient buffers -------------------------------------------------------------
    def add_grads(self, a: Array, b: Array, owned: bool) -> Array: ...

    def accumulate(self, dst: Array, src: Array) -> None: ...

    # -- special functions -------------------------------------------------------------------------
    def special_unary(self, name: str, x: Array, dtype: Any, n: int | None = None) -> Array:
        """The special function ``name`` (``"polygamma"`` of order ``n``) of ``x`` as
        ``dtype``, computed in float64 and rounded once (NOTE [Special-function kernels])."""
        ...

    def special_binary(self, name: str, a: Any, b: Any, dtype: Any = None) -> Array:
        """The broadcasting two-operand special function ``name`` (``gammainc``,
        ``gammaincc``, ``zeta``, ``xlogy``, ``xlog1py``, ``nextafter``) as ``dtype``."""
        ...

    def standard_gamma(self, name: str, alpha: Array, b: Array) -> Array:
        """``"_standard_gamma"``: the standard gamma inverse CDF of ``alpha`` at uniforms
        ``b``; ``"_standard_gamma_grad"``: its derivative in ``alpha`` at samples ``b``."""
        ...

    # -- linear algebra ----------------------------------------------------------------------------
    def inv(self, a: Array) -> Array: ...

    def solve(self, a: Array, b: Array) -> Array: ...

    def solve_triangular(self, a: Array, b: Array, upper: bool, unitriangular: bool) -> Array: ...

    def cholesky(self, a: Array) -> Array:
        """The lower factor ``L`` of ``A = L L^T``."""
        ...

    def cholesky_ex(self, a: Array) -> tuple[Array, Array]:
        """``(L, info)`` without raising: ``info`` (int32, per matrix) the order of the first
        leading minor that is not positive-definite, 0 on success."""
        ...

    def det(self, a: Array) -> Array: ...

    def slogdet(self, a: Array) -> tuple[Array, Array]: ...

    def eigh(self, a: Array, uplo: str = "L") -> tuple[Array, Array]: ...

    def eig(self, a: Array) -> tuple[Array, Array]:
        """Eigenvalues and unit eigenvectors of general matrices, always complex."""
        ...

    def svd(self, a: Array, full_matrices: bool = True) -> tuple[Array, Array, Array]: ...

    def qr(self, a: Array, mode: str = "reduced") -> Any:
        """NumPy's ``linalg.qr``: ``(Q, R)``, or ``R`` alone for mode ``'r'``."""
        ...

    def matrix_exp(self, a: Array) -> Array: ...

    def det_backward(self, a: Array, d: Array, g: Array) -> Array | None:
        """The VJP of ``det`` fused on arrays, or None (no fused rule on this device)."""
        ...
