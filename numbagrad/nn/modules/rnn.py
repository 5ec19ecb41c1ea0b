"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells (PyTorch's
``torch.nn.modules.rnn``), with PyTorch's parameter names, shapes and initialisation so that
``state_dict``s move between the two libraries.

Each layer and direction projects the whole input sequence with one GEMM and runs the
recurrence as one fused primitive (NOTE [Fused recurrence] in ``nn/_rnn.py``); an LSTM with
``proj_size`` runs its recurrence step by step with tensor ops. The cells are one step of
the same primitives.
"""

from __future__ import annotations

import math
import numbers
import warnings

from numbagrad import _dtype as _dt
from numbagrad import ops as _ops
from numbagrad._creation import empty, tensor, zeros
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn._rnn import rnn_layer
from numbagrad.nn.modules.layers import _factory
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter
from numbagrad.nn.utils.rnn import PackedSequence, _packed_positions, pad_packed_sequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_proj_layer(xp, h0, c0, w_hh, b_hh, w_hr, reverse, batch_sizes):
    """An LSTM layer with projections, step by step in tensor ops: ``h = (o tanh(c))
    W_hr^T``."""
    T, B = xp.shape[0], xp.shape[1]
    bs = (B,) * T if batch_sizes is None else batch_sizes
    h, c = h0, c0
    outs = [None] * T
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        n = bs[t]
        hn, cn = (h, c) if n == B else (h[:n], c[:n])
        gates = xp[t, :n] + _ops.matmul(hn, w_hh.t())
        if b_hh is not None:
            gates = gates + b_hh
        i, f, g, o = _ops.chunk(gates, 4, -1)
        cn = _ops.sigmoid(f) * cn + _ops.sigmoid(i) * _ops.tanh(g)
        hn = _ops.matmul(_ops.sigmoid(o) * _ops.tanh(cn), w_hr.t())
        if n == B:
            h, c = hn, cn
            outs[t] = hn
        else:
            h = _ops.cat([hn, h[n:]], 0)
            c = _ops.cat([cn, c[n:]], 0)
            outs[t] = _ops.cat([hn, zeros((B - n, hn.shape[1]), dtype=hn.dtype)], 0)
    return _ops.stack(outs, 0), h, c


class RNNBase(Module):
    """The common base of :class:`RNN`, :class:`LSTM` and :class:`GRU` (PyTorch's
    ``RNNBase``): parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (``_reverse`` for the backward direction; ``weight_hr_l{k}`` with
    ``proj_size``), all drawn from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        dt = _factory(device, dtype)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    params += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    params.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in params:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(*shape, dtype=dt)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (PyTorch's cuDNN weight compaction)."""

    def reset_parameters(self):
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ------------------------------------------------------------------------------
    def _out_hidden(self):
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def _prepare(self, input, hx):
        """``(x (T, B, I), batch_sizes, sorted, unsorted, is_packed, unbatched, hx)``."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            data, bsz, sorted_i, unsorted_i = input
            bs = tuple(int(v) for v in bsz.tolist())
            if data.ndim != 2:
                raise ValueError(f"{name}: Expected packed input data to be 2D, got {data.ndim}D")
            if data.shape[-1] != self.input_size:
                raise RuntimeError(
                    f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                    f"got {data.shape[-1]}"
                )
            # padded in sorted order (no unsorting: the recurrence needs the sorted batch)
            x, _ = pad_packed_sequence(PackedSequence(data, bsz, None, None))
            if hx is not None and sorted_i is not None:
                hx = (
                    tuple(_ops.index_select(h, 1, sorted_i) for h in hx)
                    if isinstance(hx, tuple)
                    else _ops.index_select(hx, 1, sorted_i)
                )
            return x, bs, sorted_i, unsorted_i, True, False, hx
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead"
            )
        unbatched = input.ndim == 2
        hxs = hx if isinstance(hx, tuple) else (hx,)
        for h in hxs:
            if h is None:
                continue
            if unbatched and h.ndim != 2:
                raise RuntimeError(
                    f"For unbatched 2-D input, hx should also be 2-D but got {h.ndim}-D tensor"
                )
            if not unbatched and h.ndim != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {h.ndim}-D tensor"
                )
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.shape[-1]}"
            )
        return input, None, None, None, False, unbatched, hx

    def _run(self, x, h0s, c0s, batch_sizes):
        """All layers: the last layer's output and the final states per layer/direction."""
        D = 2 if self.bidirectional else 1
        hn, cn = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                names = self._all_weights[k]
                w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
                b_ih = getattr(self, names[2]) if self.bias else None
                b_hh = getattr(self, names[3]) if self.bias else None
                xp = F.linear(layer_in, w_ih, b_ih)
                if self.proj_size > 0:
                    w_hr = getattr(self, names[-1])
                    hs, hT, cT = _lstm_proj_layer(
                        xp, h0s[k], c0s[k], w_hh, b_hh, w_hr, d == 1, batch_sizes
                    )
                else:
                    hs, hT, cT = rnn_layer(
                        self.mode,
                        xp.contiguous(),
                        h0s[k],
                        None if c0s is None else c0s[k],
                        w_hh,
                        b_hh,
                        reverse=d == 1,
                        batch_sizes=batch_sizes,
                    )
                outs.append(hs)
                hn.append(hT)
                if cT is not None:
                    cn.append(cT)
            layer_in = outs[0] if D == 1 else _ops.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        return layer_in, hn, cn

    def _finish(self, out, bs, sorted_i, unsorted_i, packed, unbatched):
        if packed:
            T, B = out.shape[0], out.shape[1]
            pos = tensor(_packed_positions(bs, B), dtype=_dt.int64)
            data = _ops.index_select(out.reshape(T * B, out.shape[-1]), 0, pos)
            return PackedSequence(data, tensor(list(bs), dtype=_dt.int64), sorted_i, unsorted_i)
        if unbatched:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out

    def _states(self, states, unsorted_i, packed, unbatched):
        h = _ops.stack(states, 0)
        if packed and unsorted_i is not None:
            h = _ops.index_select(h, 1, unsorted_i)
        return h.squeeze(1) if unbatched else h

    def _default_state(self, x, width):
        D = 2 if self.bidirectional else 1
        return zeros(self.num_layers * D, x.shape[1], width, dtype=x.dtype)

    def _forward(self, input, hx, lstm):
        x, bs, sorted_i, unsorted_i, packed, unbatched, hx = self._prepare(input, hx)
        D = 2 if self.bidirectional else 1
        B = x.shape[1]
        h_width = self._out_hidden()
        if hx is None:
            h0 = self._default_state(x, h_width)
            c0 = self._default_state(x, self.hidden_size) if lstm else None
        elif lstm:
            if not isinstance(hx, tuple) or len(hx) != 2:
                raise RuntimeError("LSTM: expected hx to be a tuple (h_0, c_0)")
            h0, c0 = hx
            self._check_hidden(h0, (self.num_layers * D, B, h_width))
            self._check_hidden(c0, (self.num_layers * D, B, self.hidden_size), "cell")
        else:
            h0, c0 = hx, None
            self._check_hidden(h0, (self.num_layers * D, B, h_width))
        for t in (h0, c0):
            if t is not None and t.dtype != x.dtype:
                raise RuntimeError(
                    f"Input and hidden tensors are not the same dtype, found input tensor "
                    f"with {x.dtype} and hidden tensor with {t.dtype}"
                )
        h0s = list(h0.unbind(0))
        c0s = list(c0.unbind(0)) if c0 is not None else None
        out, hn, cn = self._run(x, h0s, c0s, bs)
        out = self._finish(out, bs, sorted_i, unsorted_i, packed, unbatched)
        h = self._states(hn, unsorted_i, packed, unbatched)
        if lstm:
            return out, (h, self._states(cn, unsorted_i, packed, unbatched))
        return out, h


class RNN(RNNBase):
    """A multi-layer Elman RNN, ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    with ``act`` tanh or ReLU (PyTorch's ``nn.RNN``; same arguments, shapes and outputs
    ``(output, h_n)``).

    Examples
    --------
    >>> import numbagrad
    >>> rnn = numbagrad.nn.RNN(4, 8, num_layers=2)
    >>> out, h = rnn(numbagrad.randn(5, 3, 4))
    >>> out.shape, h.shape
    (numbagrad.Size([5, 3, 8]), numbagrad.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, False)


class LSTM(RNNBase):
    """A multi-layer LSTM (PyTorch's ``nn.LSTM``, gates ``i, f, g, o``; ``proj_size``
    projects the hidden state with ``weight_hr_l{k}``); returns ``(output, (h_n, c_n))``.

    Examples
    --------
    >>> import numbagrad
    >>> lstm = numbagrad.nn.LSTM(4, 8, batch_first=True)
    >>> out, (h, c) = lstm(numbagrad.randn(3, 5, 4))
    >>> out.shape, h.shape, c.shape
    (numbagrad.Size([3, 5, 8]), numbagrad.Size([1, 3, 8]), numbagrad.Size([1, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, True)


class GRU(RNNBase):
    """A multi-layer GRU (PyTorch's ``nn.GRU``: gates ``r, z, n``, ``n = tanh(x W_in^T + b_in
    + r (h W_hn^T + b_hn))``, ``h' = (1 - z) n + z h``); returns ``(output, h_n)``.

    Examples
    --------
    >>> import numbagrad
    >>> gru = numbagrad.nn.GRU(4, 8, bidirectional=True)
    >>> out, h = gru(numbagrad.randn(5, 3, 4))
    >>> out.shape, h.shape
    (numbagrad.Size([5, 3, 16]), numbagrad.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, False)


# -- cells -------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The common base of the cells: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``
    drawn from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        dt = _factory(device, dtype)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dt))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dt))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dt))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def reset_parameters(self):
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, n_states):
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        hxs = hx if isinstance(hx, tuple) else (hx,)
        for h in hxs:
            if h is not None and h.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.ndim}D instead")
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected "
                f"{self.input_size}"
            )
        B = input.shape[0]
        if hx is None:
            states = [zeros(B, self.hidden_size, dtype=input.dtype) for _ in range(n_states)]
        else:
            states = [h.unsqueeze(0) if unbatched else h for h in hxs]
            for h in states:
                if tuple(h.shape) != (B, self.hidden_size):
                    raise RuntimeError(
                        f"hidden{'' if len(states) == 1 else '[0]'} has inconsistent hidden_size "
                        f"or batch size: got {list(h.shape)} expected "
                        f"[{B}, {self.hidden_size}]"
                    )
        return input, states, unbatched

    def _step(self, mode, input, states):
        xp = F.linear(input, self.weight_ih, self.bias_ih).unsqueeze(0)
        c0 = states[1] if mode == "LSTM" else None
        _, hT, cT = rnn_layer(mode, xp, states[0], c0, self.weight_hh, self.bias_hh)
        return hT, cT


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Examples
    --------
    >>> import numbagrad
    >>> cell = numbagrad.nn.RNNCell(4, 8)
    >>> cell(numbagrad.randn(3, 4)).shape
    numbagrad.Size([3, 8])
    """

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, states, unbatched = self._prepare(input, hx, 1)
        h, _ = self._step("RNN_RELU" if self.nonlinearity == "relu" else "RNN_TANH", x, states)
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``.

    Examples
    --------
    >>> import numbagrad
    >>> cell = numbagrad.nn.LSTMCell(4, 8)
    >>> h, c = cell(numbagrad.randn(3, 4))
    >>> h.shape, c.shape
    (numbagrad.Size([3, 8]), numbagrad.Size([3, 8]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, states, unbatched = self._prepare(input, hx, 2)
        if hx is not None and (not isinstance(hx, tuple) or len(hx) != 2):
            raise RuntimeError("LSTMCell: expected hx to be a tuple (h_0, c_0)")
        h, c = self._step("LSTM", x, states)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step.

    Examples
    --------
    >>> import numbagrad
    >>> cell = numbagrad.nn.GRUCell(4, 8)
    >>> cell(numbagrad.randn(3, 4)).shape
    numbagrad.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, states, unbatched = self._prepare(input, hx, 1)
        h, _ = self._step("GRU", x, states)
        return h.squeeze(0) if unbatched else h
