"""The fused recurrences (``RnnLayer``, ``GruLayer``, ``LstmLayer``) have no CUDA kernel: on
CUDA tensors they raise ``NotImplementedError`` naming the op (docs/gpu.rst), never running
on the host silently."""

import pytest

import numbagrad
from numbagrad.nn._rnn import rnn_layer


@pytest.mark.parametrize(
    "mode,op,gates",
    [("RNN_TANH", "RnnLayer", 1), ("GRU", "GruLayer", 3), ("LSTM", "LstmLayer", 4)],
)
def test_fused_recurrence_raises_on_cuda(mode, op, gates):
    xp = numbagrad.zeros(3, 2, gates * 4, device="cuda")
    h0 = numbagrad.zeros(2, 4, device="cuda")
    w = numbagrad.zeros(gates * 4, 4, device="cuda")
    c0 = h0 if mode == "LSTM" else None
    with pytest.raises(NotImplementedError, match=f"{op}.*\\.cpu\\(\\)"):
        rnn_layer(mode, xp, h0, c0, w, None)
