"""The cell loops of the fused recurrent layers (``numbagrad/nn/_rnn.py``): one time step of
a tanh/ReLU RNN, a GRU or an LSTM, forward and backward, over the ``n`` active rows of a
batch.

NOTE [Fused recurrence kernels]
The recurrent layers project the whole input sequence with one GEMM before the loop; what is
left per step is a small GEMM with the hidden-to-hidden weight (NumPy's BLAS, called by the
driver in ``nn/_rnn.py``) and the cell's elementwise work, which is one kernel here instead
of the eight to fifteen ops (and as many temporary arrays) of a cell written with tensor
ops. Every array is 2-D and C-contiguous with ``n`` rows (the active prefix of the batch:
packed sequences are sorted by decreasing length), the gate blocks side by side in
PyTorch's order (LSTM ``i, f, g, o``; GRU ``r, z, n``). Nothing is checked here: the
driver passes arrays of the right shapes (NOTE [Bounds-check mode] in ``_jit.py``).

The transcendental functions are NumPy's (``np.tanh`` on a whole step, SIMD): a scalar
``math.tanh``/``math.exp`` per element in the kernel measured 30x slower than the rest of the
step (120 us against 3.4 us for the 8,192 gate values of an LSTM step at batch 32, hidden
64). The sigmoid gates are ``1 / (1 + exp(-a))``, as PyTorch's: the driver negates their
pre-activations (in the input projections and the columns of ``W_hh^T``), takes ``np.exp``
over them and ``np.tanh`` over the ``tanh`` gates, and the kernels here do the arithmetic,
which LLVM vectorises. (``1/2 + tanh(a/2)/2``, one ``np.tanh`` over all gates, cancels to
exactly 0 below ``a`` of about -17 in float32 where the sigmoid is tiny but positive: a gate
of 0 times an ``inf`` weight made a ``nan`` where PyTorch's gives ``inf``.) The forward writes
what the backward needs so that it recomputes nothing but ``tanh(c)``: the LSTM's four
activated gates, the GRU's ``r, z, n`` and ``W_hn h + b_hn`` (``ws``), and the new states.
The backward gets the gradient of the new hidden state ``dh`` (and the LSTM's cell ``dc``),
the gradient of the gate workspace when one is given (``has_gws``: the double backward
differentiates through it), and writes the gradients of the pre-activations.
"""

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "gru_backward_step",
    "gru_forward_mid",
    "gru_forward_out",
    "lstm_backward_step",
    "lstm_forward_gates",
    "lstm_forward_out",
    "rnn_backward_step",
]


@njit(error_model="numpy")
def lstm_forward_gates(ws, c, cs):
    """The LSTM gates from ``ws`` (``exp(-a)`` for the sigmoid gates ``i, f, o``:
    ``sigmoid(a) = 1 / (1 + exp(-a))``; ``tanh(a)`` for ``g``), in place; the new cell
    state into ``c`` (read as the previous one) and ``cs``."""
    n, hid = c.shape
    for r in range(n):
        for j in range(hid):
            gi = 1.0 / (1.0 + ws[r, j])
            gf = 1.0 / (1.0 + ws[r, hid + j])
            gg = ws[r, 2 * hid + j]
            ws[r, j] = gi
            ws[r, hid + j] = gf
            ws[r, 3 * hid + j] = 1.0 / (1.0 + ws[r, 3 * hid + j])
            cn = gf * c[r, j] + gi * gg
            c[r, j] = cn
            cs[r, j] = cn


@njit(error_model="numpy")
def lstm_forward_out(ws, tc, h, hs):
    """``h = o tanh(c)`` into the running state ``h`` and the output row ``hs``."""
    n, hid = h.shape
    for r in range(n):
        for j in range(hid):
            v = ws[r, 3 * hid + j] * tc[r, j]
            h[r, j] = v
            hs[r, j] = v


@njit(error_model="numpy")
def lstm_backward_step(dh, dc, ws, tc, cprev, gws, has_gws, da):
    """One LSTM step backward (``tc = tanh(c_t)``): ``dh``/``dc`` are the gradients of the
    step's new hidden and cell states; ``dc`` is overwritten with the previous cell's
    gradient and ``da`` gets the four pre-activation gradients (the previous hidden state's
    is ``da @ W_hh``)."""
    n, hid = dh.shape
    for r in range(n):
        for j in range(hid):
            gi = ws[r, j]
            gf = ws[r, hid + j]
            gg = ws[r, 2 * hid + j]
            go = ws[r, 3 * hid + j]
            t = tc[r, j]
            d = dh[r, j]
            dgo = d * t
            dct = dc[r, j] + d * go * (1.0 - t * t)
            dgi = dct * gg
            dgf = dct * cprev[r, j]
            dgg = dct * gi
            if has_gws:
                dgi += gws[r, j]
                dgf += gws[r, hid + j]
                dgg += gws[r, 2 * hid + j]
                dgo += gws[r, 3 * hid + j]
            dc[r, j] = dct * gf
            da[r, j] = dgi * gi * (1.0 - gi)
            da[r, hid + j] = dgf * gf * (1.0 - gf)
            da[r, 2 * hid + j] = dgg * (1.0 - gg * gg)
            da[r, 3 * hid + j] = dgo * go * (1.0 - go)


@njit(error_model="numpy")
def gru_forward_mid(ws, hw, xp, b, npre):
    """From ``ws[:, :2H] = exp(-(a_r, a_z))``: ``r`` and ``z`` in place, ``W_hn h + b_hn``
    into ``ws[:, 3H:]`` and the pre-activation ``x_n + r (W_hn h + b_hn)`` into ``npre``."""
    n, hid = npre.shape
    for r in range(n):
        for j in range(hid):
            gr = 1.0 / (1.0 + ws[r, j])
            ghn = hw[r, 2 * hid + j] + b[2 * hid + j]
            ws[r, j] = gr
            ws[r, hid + j] = 1.0 / (1.0 + ws[r, hid + j])
            ws[r, 3 * hid + j] = ghn
            npre[r, j] = xp[r, 2 * hid + j] + gr * ghn


@njit(error_model="numpy")
def gru_forward_out(ws, gn, h, hs):
    """``h' = (1 - z) n + z h`` (``gn = n``) into ``h`` (read as the previous state),
    ``hs``, and ``n`` into ``ws``."""
    n, hid = h.shape
    for r in range(n):
        for j in range(hid):
            gz = ws[r, hid + j]
            v = gn[r, j]
            ws[r, 2 * hid + j] = v
            hn = (1.0 - gz) * v + gz * h[r, j]
            h[r, j] = hn
            hs[r, j] = hn


@njit(error_model="numpy")
def gru_backward_step(dh, hprev, ws, gws, has_gws, dxp, dhw):
    """One GRU step backward: ``dxp`` gets the gradients of the input projections, ``dhw``
    those of ``W_hh h + b_hh``; ``dh`` is overwritten with the direct part of the previous
    state's gradient (``dh z``; the caller adds ``dhw @ W_hh``)."""
    n, hid = dh.shape
    for r in range(n):
        for j in range(hid):
            gr = ws[r, j]
            gz = ws[r, hid + j]
            gn = ws[r, 2 * hid + j]
            ghn = ws[r, 3 * hid + j]
            d = dh[r, j]
            dn = d * (1.0 - gz)
            dz = d * (hprev[r, j] - gn)
            if has_gws:
                dn += gws[r, 2 * hid + j]
                dz += gws[r, hid + j]
            dan = dn * (1.0 - gn * gn)
            dghn = dan * gr
            dr = dan * ghn
            if has_gws:
                dghn += gws[r, 3 * hid + j]
                dr += gws[r, j]
            dar = dr * gr * (1.0 - gr)
            daz = dz * gz * (1.0 - gz)
            dxp[r, j] = dar
            dxp[r, hid + j] = daz
            dxp[r, 2 * hid + j] = dan
            dhw[r, j] = dar
            dhw[r, hid + j] = daz
            dhw[r, 2 * hid + j] = dghn
            dh[r, j] = d * gz


@njit(error_model="numpy")
def rnn_backward_step(dh, h, relu, da):
    """The pre-activation gradient ``da`` from ``dh`` and the step's output ``h``."""
    n, hid = dh.shape
    for r in range(n):
        for j in range(hid):
            v = h[r, j]
            if relu:
                # PyTorch's threshold_backward: 0 where h <= 0, so a NaN h passes dh
                da[r, j] = 0.0 if v <= 0 else dh[r, j]
            else:
                da[r, j] = dh[r, j] * (1.0 - v * v)
