"""PyTorch's ``torch.nn.modules.sparse``: ``Embedding`` (defined in ``layers.py``) and
``EmbeddingBag``."""

from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import empty
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.layers import Embedding, _factory
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings without materialising each embedding
    list (PyTorch's ``nn.EmbeddingBag``; see
    :func:`numbagrad.nn.functional.embedding_bag`). ``weight`` starts ``N(0, 1)``, the
    ``padding_idx`` row zero.

    Examples
    --------
    >>> import numbagrad
    >>> bag = numbagrad.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(numbagrad.tensor([[1, 2], [4, 5]])).shape
    numbagrad.Size([2, 3])
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="mean",
        sparse=False,
        _weight=None,
        include_last_offset=False,
        padding_idx=None,
        device=None,
        dtype=None,
    ):
        super().__init__()
        dt = _factory(device, dtype)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dt))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        """``N(0, 1)``, the ``padding_idx`` row zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="mean",
        sparse=False,
        include_last_offset=False,
        padding_idx=None,
    ):
        """An ``EmbeddingBag`` holding ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows,
            cols,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            embeddings,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
