"""Ready-made parametrizations (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm`` and ``spectral_norm``, registered with
:func:`~numbagrad.nn.utils.parametrize.register_parametrization` under PyTorch's names
(``parametrizations.weight.original0``/``original1``; ``parametrizations.weight.0._u``,
``_v``), so their state dicts move between the two libraries."""

from __future__ import annotations

from numbagrad import ops as _ops
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import randn
from numbagrad.nn.modules.module import Module
from numbagrad.nn.utils import parametrize

__all__ = ["spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    """PyTorch's ``norm_except_dim(v, 2, dim)``: the 2-norm over every dim but ``dim``
    (over all of them for ``dim = -1``), shaped to broadcast against ``v``."""
    if dim == -1:
        return _ops.sqrt((v * v).sum())
    d = dim % v.ndim
    dims = tuple(i for i in range(v.ndim) if i != d)
    return _ops.sqrt((v * v).sum(dims, keepdim=True))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norms over every dim but
    ``dim``; ``dim=None``: the whole tensor), ``g`` and ``v`` stored as ``original0`` and
    ``original1``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(numbagrad.nn.Linear(4, 3))
    >>> [k for k in m.state_dict()]
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _normalize(x, eps):
    return x / _ops.clamp_min(_ops.sqrt((x * x).sum()), eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            self.register_buffer("_u", _normalize(randn(h, dtype=weight.dtype), eps))
            self.register_buffer("_v", _normalize(randn(w, dtype=weight.dtype), eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, n_power_iterations):
        with no_grad():
            mat = mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(_ops.mv(mat, self._v), self.eps))
                self._v.copy_(_normalize(_ops.mv(mat.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (one step per training-mode access; the vectors are the buffers ``_u`` and ``_v``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.parametrizations import spectral_norm
    >>> m = spectral_norm(numbagrad.nn.Linear(5, 4))
    >>> sorted(m.parametrizations.weight[0].state_dict())
    ['_u', '_v']
    """
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
