"""``numbagrad.functional``: PyTorch's ``torch.functional`` module, which scripts import
names from (``from torch.functional import F``, ``from torch.functional import einsum``).

It re-exports ``F`` (:mod:`numbagrad.nn.functional`) and the functions of
``torch.functional.__all__`` that numbagrad has; they are the top-level functions
(``numbagrad.functional.einsum is numbagrad.einsum``). Not here yet: ``broadcast_shapes``,
``chain_matmul``, ``istft``, ``lu``, ``pca_lowrank``, ``stft``, ``svd_lowrank`` and
``unravel_index`` (``tests/data/missing_names.json`` lists them).

Examples
--------
>>> import numbagrad
>>> from numbagrad.functional import F, einsum
>>> F.relu(numbagrad.tensor([-1.0, 2.0]))
tensor([0., 2.])
>>> einsum("i,i->", numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, 4.0]))
tensor(11.)
"""

from numbagrad.nn import functional as F
from numbagrad.ops import cdist, einsum, norm, split, tensordot

# (from their modules: ``numbagrad.ops``'s ``__all__`` is built at import, which a type
# checker cannot follow)
from numbagrad.ops.math import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_tensors,
    cartesian_prod,
    meshgrid,
)
from numbagrad.ops.searching import unique, unique_consecutive

__all__ = [
    "F",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "einsum",
    "meshgrid",
    "norm",
    "split",
    "tensordot",
    "unique",
    "unique_consecutive",
]
