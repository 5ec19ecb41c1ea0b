"""``AdaptiveLogSoftmaxWithLoss`` (PyTorch's ``torch.nn.modules.adaptive``): the efficient
softmax of Grave et al. (2016) for many classes with a skewed frequency."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from numbagrad import ops as _ops
from numbagrad._creation import tensor
from numbagrad.nn import functional as F
from numbagrad.nn.modules.container import ModuleList, Sequential
from numbagrad.nn.modules.layers import Linear
from numbagrad.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax (PyTorch's ``nn.AdaptiveLogSoftmaxWithLoss``).

    The classes ``0 .. cutoffs[0] - 1`` (the shortlist, the frequent ones) and one entry per
    cluster share the ``head`` linear layer; the classes of cluster ``i`` (``cutoffs[i] ..
    cutoffs[i + 1] - 1``) get their log-probability from ``tail[i]``, two bias-free linear
    layers through ``in_features // div_value ** (i + 1)`` features, plus the head's
    log-probability of the cluster. ``forward(input, target)`` returns ``(output, loss)``:
    each target's log-probability and the mean negative of them. Parameter names and
    initialisation are PyTorch's.

    Examples
    --------
    >>> import numbagrad
    >>> asm = numbagrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
    >>> out, loss = asm(numbagrad.randn(3, 8), numbagrad.tensor([0, 5, 9]))
    >>> out.shape, loss.shape, asm.log_prob(numbagrad.randn(2, 8)).shape
    (numbagrad.Size([3]), numbagrad.Size([]), numbagrad.Size([2, 10]))
    """

    def __init__(
        self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None,
        dtype=None,
    ):  # fmt: skip
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hsz, bias=False, **kw),
                    Linear(hsz, osz, bias=False, **kw),
                )
            )

    def reset_parameters(self):
        """Draw the layers' default initialisation again."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.ndim
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.ndim != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        elif targ_dim == 0:
            if input_.ndim != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        x = input_ if batched else _ops.unsqueeze(input_, 0)
        t = np.asarray(target_.detach().cpu().numpy()).reshape(-1)
        dev = x.device
        gather = np.empty(t.shape[0], np.int64)
        output = None
        used = 0
        bounds = [0, *self.cutoffs]
        for i in range(len(bounds) - 1):
            rows = np.nonzero((t >= bounds[i]) & (t < bounds[i + 1]))[0]
            if rows.size == 0:
                continue
            if i == 0:
                gather[rows] = t[rows]
            else:
                rows_t = tensor(rows, device=dev)
                cluster = self.tail[i - 1](_ops.index_select(x, 0, rows_t))
                rel = tensor(t[rows] - bounds[i], device=dev)
                local = _ops.gather(F.log_softmax(cluster, dim=1), 1, _ops.unsqueeze(rel, 1))
                gather[rows] = self.shortlist_size + i - 1
                part = x.new_zeros(t.shape[0]).index_add(0, rows_t, _ops.squeeze(local, 1))
                output = part if output is None else output + part
            used += rows.size
        if used != t.shape[0]:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{t.min()}, {t.max()}] were found. "
            )
        head = F.log_softmax(self.head(x), dim=1)
        picked = _ops.squeeze(_ops.gather(head, 1, tensor(gather[:, None], device=dev)), 1)
        output = picked if output is None else output + picked
        loss = (-output).mean()
        if not batched:
            output = _ops.squeeze(output, 0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            j = self.shortlist_size + i
            parts.append(cluster + head[:, j : j + 1])
        return _ops.cat(parts, 1)

    def log_prob(self, input):
        """The log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each example, ``(N,)`` (as ``log_prob(input).argmax(1)``,
        with the full distribution computed only for the rows whose head points to a
        cluster)."""
        head_output = self.head(input)
        output = _ops.argmax(head_output, 1)
        outside = (output >= self.shortlist_size).numpy()
        if not outside.any():
            return output
        if outside.all():
            return _ops.argmax(self._get_full_log_prob(input, head_output), 1)
        rows = tensor(np.nonzero(outside)[0], device=input.device)
        full = self._get_full_log_prob(
            _ops.index_select(input, 0, rows), _ops.index_select(head_output, 0, rows)
        )
        return _ops.index_put(output, (rows,), _ops.argmax(full, 1))
