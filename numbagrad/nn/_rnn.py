"""The fused recurrent primitives: one layer and direction of a tanh/ReLU RNN, a GRU or an
LSTM over a whole sequence, its input projections already done.

NOTE [Fused recurrence]
``nn.RNN``/``GRU``/``LSTM`` (``nn/modules/rnn.py``) compute ``x W_ih^T + b_ih`` for the whole
sequence with one GEMM, then bind one primitive per layer and direction for the recurrence.
Its operands are the projections ``xp`` (``T, B, G*H``), the initial state ``h0`` (and the
LSTM's ``c0``), ``W_hh`` and ``b_hh`` (the float 0.0 without biases); its params are
``reverse`` and ``batch_sizes`` (a tuple, the number of active rows per step of a packed
batch sorted by decreasing length; None when every row runs every step). A row that is not
active at a step keeps its state, so the final states are each sequence's last (first, in
reverse) state; the outputs of inactive steps are 0, as PyTorch pads them.

Outputs: ``hs`` (every step's hidden state), ``hT`` (the final state) and for the LSTM ``cs``,
``cT``; the GRU and LSTM add the gate workspace ``ws`` (the LSTM's activated ``i, f, g, o``,
the GRU's ``r, z, n, W_hn h + b_hn``), a real output of the primitive (its gradient is
honoured) that the module drops. The forward (``impl``) is a Python loop over steps doing one
BLAS product with ``W_hh`` and one ``@njit`` cell kernel (``kernels/cpu/rnn.py``);
``fused_vjp`` is the backward through time on arrays with the same kernels and one GEMM for
``dW_hh`` after the loop. ``vjp`` is the same backward written with numbagrad ops step by step
from the saved outputs (so it is differentiable: double backward goes through it, and through
this primitive's rules again), ``jvp`` the tangent recurrence in ops; under ``vmap`` the
mapped dim joins the batch (``_rnn_batch``). CUDA arrays raise ``NotImplementedError`` naming the op
(docs/gpu.rst).
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as _D
from numbagrad import ops as F
from numbagrad._core.graph import SavedOutput
from numbagrad._creation import zeros
from numbagrad._tensor import Tensor
from numbagrad.kernels import module as kernel_module
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import front

__all__ = ["GruLayer", "LstmLayer", "RnnLayer", "rnn_layer"]


_RNN_KERNELS = kernel_module("rnn")  # imported on first use (NOTE [Lazy kernels])


def _kernels():
    """The cell kernels (``numbagrad.kernels.cpu.rnn``)."""
    return _RNN_KERNELS


def _steps(T, reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _sizes(batch_sizes, T, B):
    return (B,) * T if batch_sizes is None else batch_sizes


def _cpu_only(be, name):
    if be.xp is not np:
        raise NotImplementedError(
            f"{name}: the fused recurrence has no CUDA kernel; move the tensors to the CPU "
            "with .cpu()"
        )


def _prev_array(seq, init, reverse, bs):
    """The state each step starts from, as one ``(T, B, H)`` array: ``init`` where a row
    starts (step 0, or in reverse the step where the row becomes active), else the
    neighbouring step's output."""
    T = seq.shape[0]
    out = np.empty_like(seq)
    if not reverse:
        out[0] = init
        out[1:] = seq[:-1]
    else:
        out[T - 1] = init
        for t in range(T - 1):
            n = bs[t + 1]
            out[t, :n] = seq[t + 1, :n]
            out[t, n:] = init[n:]
    return out


def _bias(be, b, width, dtype):
    if isinstance(b, float):
        return np.zeros(width, dtype=dtype)
    return np.ascontiguousarray(b)


class _Layer(Primitive, register=False):
    """Shared recording: the rules read the saved inputs and every output."""

    saves_output = True

    @classmethod
    def _record(cls, args, params, outs, be=None):
        node = (
            super()._record(args, params, outs)
            if be is None
            else super()._record(args, params, outs, be)
        )
        node._saved = [*node._saved, *(SavedOutput(o, i) for i, o in enumerate(outs) if i)]
        return node


def _saved(ctx, n_in, n_out):
    """The saved inputs, then all the outputs: an eager node saves them all (``_record``),
    a ``func.grad`` tape node keeps its outputs (``ctx.outs``)."""
    saved = ctx.saved()
    outs = getattr(ctx, "outs", None)
    if outs is not None:
        return [*saved[:n_in], *outs]
    return saved[: n_in + n_out]


def _rnn_batch(cls, args, dims, **params):
    """The batching rule: with only the sequence and the initial states batched, the vmap
    dim joins the layer's batch (one recurrence over ``V * B`` rows); with batched weights or
    a packed batch (whose active rows must stay a prefix), one application per example."""
    n_state = 2 if cls is LstmLayer else 1
    w_pos = 1 + n_state
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    if dims[w_pos] is not None or dims[w_pos + 1] is not None or params["batch_sizes"] is not None:
        outs = []
        for i in range(size):
            sl = [F.select(a, d, i) if d is not None else a for a, d in zip(args, dims)]
            outs.append(bind(cls, tuple(sl), params))
        return tuple(F.stack(list(col), 0) for col in zip(*outs)), (0,) * cls.n_out
    xp, d = args[0], dims[0]
    if d is None:
        xp = F.expand(F.unsqueeze(xp, 1), (xp.shape[0], size, *xp.shape[1:]))
    elif d != 1:
        xp = F.movedim(xp, d, 1)
    T, B = xp.shape[0], xp.shape[2]
    xp = F.reshape(xp, (T, size * B, xp.shape[-1]))
    states = []
    for a, d in zip(args[1:w_pos], dims[1:w_pos]):
        a = F.expand(F.unsqueeze(a, 0), (size, *a.shape)) if d is None else front(a, d)
        states.append(F.reshape(a, (size * B, a.shape[-1])))
    outs = bind(cls, (xp, *states, *args[w_pos:]), params)
    res = []
    odims = []
    for o in outs:
        if o.ndim == 3:  # a sequence: (T, V * B, X) -> (T, V, B, X)
            res.append(F.reshape(o, (T, size, B, o.shape[-1])))
            odims.append(1)
        else:  # a final state: (V * B, X) -> (V, B, X)
            res.append(F.reshape(o, (size, B, o.shape[-1])))
            odims.append(0)
    return tuple(res), tuple(odims)


# -- tensor helpers for the rules (written in numbagrad ops) ----------------------------------
def _rows(x, n, B):
    return x if n == B else x[:n]


def _merge(new, old, n, B):
    """``new`` in the first ``n`` rows, ``old`` below (rows not active at this step)."""
    return new if n == B else F.cat([new, old[n:]], 0)


def _pad_rows(x, n, B):
    if n == B:
        return x
    return F.cat([x, zeros((B - n, *x.shape[1:]), dtype=x.dtype)], 0)


def _prev_tensor(seq, init, t, reverse, bs, B):
    T = seq.shape[0]
    if not reverse:
        return init if t == 0 else seq[t - 1]
    if t == T - 1:
        return init
    return _merge(_rows(seq[t + 1], bs[t + 1], B), init, bs[t + 1], B)


def _zeros_like(x):
    return zeros(tuple(x.shape), dtype=x.dtype)


def _sum_terms(*terms):
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def _recurrent_tangent(th, hp, w, tw, tb, n, B):
    """``d(h W^T + b)``: the tangent of the hidden projection of ``n`` rows."""
    terms = [F.matmul(_rows(th, n, B), F.t(w)) if th is not None else None]
    if tw is not None:
        terms.append(F.matmul(hp, F.t(tw)))
    if tb is not None:
        terms.append(tb)
    return _sum_terms(*terms)


def _weight_grads(ctx, d_all, hp_all, w_index, b_index):
    """``dW_hh = sum_t dA_t^T h_{t-1}`` and ``db_hh = sum dA``."""
    G = d_all.shape[-1]
    dw = db = None
    if ctx.needs_input_grad(w_index):
        dw = F.matmul(F.t(F.reshape(d_all, (-1, G))), F.reshape(hp_all, (-1, hp_all.shape[-1])))
    if ctx.needs_input_grad(b_index):
        db = F.sum(d_all, (0, 1))
    return dw, db


# -- tanh / ReLU RNN ---------------------------------------------------------------------------
class RnnLayer(_Layer):
    """One layer and direction of ``nn.RNN`` (NOTE [Fused recurrence]): operands ``xp, h0,
    W_hh, b_hh``; outputs ``hs, hT``; param ``nonlinearity`` ``'tanh'`` or ``'relu'``."""

    n_out = 2
    saves_inputs = (1, 2)
    grad_fn = "RnnTanhBackward0"
    batch = classmethod(_rnn_batch)

    @classmethod
    def node_name(cls, params):
        return "RnnReluBackward0" if params["nonlinearity"] == "relu" else "RnnTanhBackward0"

    @staticmethod
    def impl(be, xp, h0, w, b, *, nonlinearity, reverse, batch_sizes):
        _cpu_only(be, "RnnLayer")
        T, B, H = xp.shape
        bs = _sizes(batch_sizes, T, B)
        h = np.array(h0, dtype=xp.dtype, copy=True)
        hs = np.zeros_like(xp)
        wt = np.ascontiguousarray(w.T)
        xpb = xp + _bias(be, b, H, xp.dtype)
        a = np.empty((B, H), dtype=xp.dtype)
        for t in _steps(T, reverse):
            n = bs[t]
            np.matmul(h[:n], wt, out=a[:n])
            np.add(a[:n], xpb[t, :n], out=a[:n])
            if nonlinearity == "relu":
                np.maximum(a[:n], 0, out=hs[t, :n])
            else:
                np.tanh(a[:n], out=hs[t, :n])
            h[:n] = hs[t, :n]
        return hs, h

    @staticmethod
    def fused_vjp(ctx, ghs, ghT, *, nonlinearity, reverse, batch_sizes):
        K = _kernels()
        h0, w, hs, _ = ctx.saved_arrays()
        T, B, H = hs.shape
        bs = _sizes(batch_sizes, T, B)
        relu = nonlinearity == "relu"
        dh = np.zeros((B, H), hs.dtype) if ghT is None else np.array(ghT, dtype=hs.dtype)
        da = np.zeros_like(hs)
        w = np.ascontiguousarray(w)
        for t in _steps(T, not reverse):
            n = bs[t]
            if ghs is not None:
                dh[:n] += ghs[t, :n]
            K.rnn_backward_step(dh[:n], hs[t, :n], relu, da[t, :n])
            np.matmul(da[t, :n], w, out=dh[:n])
        return _array_weight_grads(ctx, da, da, hs, h0, reverse, bs, dh, 2)

    @staticmethod
    def vjp(ctx, ghs, ghT, *, nonlinearity, reverse, batch_sizes):
        h0, w, hs, _ = _saved(ctx, 2, 2)
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        dh = _zeros_like(h0) if ghT is None else ghT
        das = [None] * T
        for t in _steps(T, not reverse):
            n = bs[t]
            d = _rows(dh, n, B)
            if ghs is not None:
                d = d + _rows(ghs[t], n, B)
            h = _rows(hs[t], n, B)
            if nonlinearity == "relu":
                da = F.where(h <= 0, 0.0, d)  # (a NaN h passes d, as PyTorch's)
            else:
                da = d * (1.0 - h * h)
            das[t] = _pad_rows(da, n, B)
            dh = _merge(F.matmul(da, w), dh, n, B)
        d_all = F.stack(das, 0)
        hp = F.stack([_prev_tensor(hs, h0, t, reverse, bs, B) for t in range(T)], 0)
        dw, db = _weight_grads(ctx, d_all, hp, 2, 3)
        return d_all, dh, dw, db

    @staticmethod
    def jvp(primals, tangents, out, *, nonlinearity, reverse, batch_sizes):
        _, h0, w, _ = primals
        txp, th, tw, tb = tangents
        hs = out[0]
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        ths = [None] * T
        for t in _steps(T, reverse):
            n = bs[t]
            hp = _rows(_prev_tensor(hs, h0, t, reverse, bs, B), n, B)
            ta = _sum_terms(
                None if txp is None else _rows(txp[t], n, B),
                _recurrent_tangent(th, hp, w, tw, tb, n, B),
            )
            if ta is None:
                ta = _zeros_like(hp)
            h = _rows(hs[t], n, B)
            tn = F.where(h <= 0, 0.0, ta) if nonlinearity == "relu" else ta * (1.0 - h * h)
            ths[t] = _pad_rows(tn, n, B)
            th = _merge(tn, th if th is not None else _zeros_like(h0), n, B)
        return F.stack(ths, 0), th


def _array_weight_grads(ctx, dxp, dhw, hs, h0, reverse, bs, dh, w_index, extra=()):
    """The array gradients ``(dxp, dh0, *extra, dW_hh, db_hh)`` after the loop."""
    G = dhw.shape[-1]
    dw = db = None
    if ctx.needs_input_grad(w_index):
        hp = _prev_array(hs, h0, reverse, bs)
        dw = dhw.reshape(-1, G).T @ hp.reshape(-1, hp.shape[-1])
    if ctx.needs_input_grad(w_index + 1):
        db = dhw.sum((0, 1))
    return (dxp if ctx.needs_input_grad(0) else None, dh, *extra, dw, db)


# -- GRU -------------------------------------------------------------------------------------
class GruLayer(_Layer):
    """One layer and direction of ``nn.GRU`` (NOTE [Fused recurrence]): operands ``xp, h0,
    W_hh, b_hh``; outputs ``hs, hT, ws``."""

    n_out = 3
    saves_inputs = (1, 2)
    grad_fn = "GruBackward0"
    batch = classmethod(_rnn_batch)

    @staticmethod
    def impl(be, xp, h0, w, b, *, reverse, batch_sizes):
        K = _kernels()
        _cpu_only(be, "GruLayer")
        T, B, G = xp.shape
        H = G // 3
        bs = _sizes(batch_sizes, T, B)
        dt = xp.dtype
        h = np.array(h0, dtype=dt, copy=True)
        hs = np.zeros((T, B, H), dtype=dt)
        ws = np.zeros((T, B, 4 * H), dtype=dt)
        bb = _bias(be, b, G, dt)
        # r and z: exp(-a) (NOTE [Fused recurrence kernels]): negate their columns
        scale = np.ones(G, dtype=dt)
        scale[: 2 * H] = -1.0
        wt = np.ascontiguousarray(w.T) * scale
        xrz = (xp[..., : 2 * H] + bb[: 2 * H]) * scale[: 2 * H]
        hw = np.empty((B, G), dtype=dt)
        npre = np.empty((B, H), dtype=dt)
        for t in _steps(T, reverse):
            n = bs[t]
            wst = ws[t, :n]
            np.matmul(h[:n], wt, out=hw[:n])
            np.add(hw[:n, : 2 * H], xrz[t, :n], out=wst[:, : 2 * H])
            with np.errstate(over="ignore"):
                np.exp(wst[:, : 2 * H], out=wst[:, : 2 * H])
            K.gru_forward_mid(wst, hw[:n], xp[t, :n], bb, npre[:n])
            np.tanh(npre[:n], out=npre[:n])
            K.gru_forward_out(wst, npre[:n], h[:n], hs[t, :n])
        return hs, h, ws

    @staticmethod
    def fused_vjp(ctx, ghs, ghT, gws, *, reverse, batch_sizes):
        K = _kernels()
        h0, w, hs, _, ws = ctx.saved_arrays()
        T, B, H = hs.shape
        bs = _sizes(batch_sizes, T, B)
        dh = np.zeros((B, H), hs.dtype) if ghT is None else np.array(ghT, dtype=hs.dtype)
        dxp = np.zeros((T, B, 3 * H), hs.dtype)
        dhw = np.zeros((T, B, 3 * H), hs.dtype)
        hp = _prev_array(hs, np.asarray(h0, dtype=hs.dtype), reverse, bs)
        has = gws is not None
        g = gws if has else np.zeros((0, 0), hs.dtype)
        w = np.ascontiguousarray(w)
        tmp = np.empty((B, H), hs.dtype)
        for t in _steps(T, not reverse):
            n = bs[t]
            if ghs is not None:
                dh[:n] += ghs[t, :n]
            K.gru_backward_step(
                dh[:n], hp[t, :n], ws[t, :n], g[t, :n] if has else g, has, dxp[t, :n], dhw[t, :n]
            )
            np.matmul(dhw[t, :n], w, out=tmp[:n])
            dh[:n] += tmp[:n]
        return _array_weight_grads(ctx, dxp, dhw, hs, h0, reverse, bs, dh, 2)

    @staticmethod
    def vjp(ctx, ghs, ghT, gws, *, reverse, batch_sizes):
        h0, w, hs, _, ws = _saved(ctx, 2, 3)
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        dh = _zeros_like(h0) if ghT is None else ghT
        dxps = [None] * T
        dhws = [None] * T
        hps = [_prev_tensor(hs, h0, t, reverse, bs, B) for t in range(T)]
        for t in _steps(T, not reverse):
            n = bs[t]
            d = _rows(dh, n, B)
            if ghs is not None:
                d = d + _rows(ghs[t], n, B)
            r, z, nn, ghn = F.chunk(_rows(ws[t], n, B), 4, -1)
            hp = _rows(hps[t], n, B)
            dn = d * (1.0 - z)
            dz = d * (hp - nn)
            if gws is not None:
                gr, gz, gn, gghn = F.chunk(_rows(gws[t], n, B), 4, -1)
                dn = dn + gn
                dz = dz + gz
            dan = dn * (1.0 - nn * nn)
            dghn = dan * r
            dr = dan * ghn
            if gws is not None:
                dghn = dghn + gghn
                dr = dr + gr
            dar = dr * r * (1.0 - r)
            daz = dz * z * (1.0 - z)
            dxp = F.cat([dar, daz, dan], -1)
            dhw = F.cat([dar, daz, dghn], -1)
            dxps[t] = _pad_rows(dxp, n, B)
            dhws[t] = _pad_rows(dhw, n, B)
            dh = _merge(F.matmul(dhw, w) + d * z, dh, n, B)
        dhw_all = F.stack(dhws, 0)
        dw, db = _weight_grads(ctx, dhw_all, F.stack(hps, 0), 2, 3)
        return F.stack(dxps, 0), dh, dw, db

    @staticmethod
    def jvp(primals, tangents, out, *, reverse, batch_sizes):
        _, h0, w, _ = primals
        txp, th, tw, tb = tangents
        hs, _, ws = out
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        ths = [None] * T
        tws = [None] * T
        for t in _steps(T, reverse):
            n = bs[t]
            hp = _rows(_prev_tensor(hs, h0, t, reverse, bs, B), n, B)
            r, z, nn, ghn = F.chunk(_rows(ws[t], n, B), 4, -1)
            thw = _recurrent_tangent(th, hp, w, tw, tb, n, B)
            if thw is None:
                thw = zeros((hp.shape[0], 3 * hp.shape[1]), dtype=hp.dtype)
            if txp is not None:
                txr, txz, txn = F.chunk(_rows(txp[t], n, B), 3, -1)
            else:
                txr = txz = txn = 0.0
            thr, thz, thn = F.chunk(thw, 3, -1)
            tr = (thr + txr) * r * (1.0 - r)
            tz = (thz + txz) * z * (1.0 - z)
            tn = (txn + tr * ghn + r * thn) * (1.0 - nn * nn)
            tprev = _rows(th, n, B) if th is not None else None
            tnew = _sum_terms(tn * (1.0 - z), tz * (hp - nn), None if tprev is None else z * tprev)
            ths[t] = _pad_rows(tnew, n, B)
            tws[t] = _pad_rows(F.cat([tr, tz, tn, thn], -1), n, B)
            th = _merge(tnew, th if th is not None else _zeros_like(h0), n, B)
        return F.stack(ths, 0), th, F.stack(tws, 0)


# -- LSTM ------------------------------------------------------------------------------------
class LstmLayer(_Layer):
    """One layer and direction of ``nn.LSTM`` without projections (NOTE [Fused
    recurrence]): operands ``xp, h0, c0, W_hh, b_hh``; outputs ``hs, hT, cs, cT, ws``."""

    n_out = 5
    saves_inputs = (1, 2, 3)
    grad_fn = "LstmBackward0"
    batch = classmethod(_rnn_batch)

    @staticmethod
    def impl(be, xp, h0, c0, w, b, *, reverse, batch_sizes):
        K = _kernels()
        _cpu_only(be, "LstmLayer")
        T, B, G = xp.shape
        H = G // 4
        bs = _sizes(batch_sizes, T, B)
        dt = xp.dtype
        h = np.array(h0, dtype=dt, copy=True)
        c = np.array(c0, dtype=dt, copy=True)
        hs = np.zeros((T, B, H), dtype=dt)
        cs = np.zeros((T, B, H), dtype=dt)
        ws = np.zeros((T, B, G), dtype=dt)
        # the sigmoid gates from exp(-a) (NOTE [Fused recurrence kernels])
        scale = np.full(G, -1.0, dtype=dt)
        scale[2 * H : 3 * H] = 1.0
        wt = np.ascontiguousarray(w.T) * scale
        xps = (xp + _bias(be, b, G, dt)) * scale
        tc = np.empty((B, H), dtype=dt)
        for t in _steps(T, reverse):
            n = bs[t]
            wst = ws[t, :n]
            np.matmul(h[:n], wt, out=wst)
            np.add(wst, xps[t, :n], out=wst)
            with np.errstate(over="ignore"):
                np.exp(wst[:, : 2 * H], out=wst[:, : 2 * H])
                np.exp(wst[:, 3 * H :], out=wst[:, 3 * H :])
            np.tanh(wst[:, 2 * H : 3 * H], out=wst[:, 2 * H : 3 * H])
            K.lstm_forward_gates(wst, c[:n], cs[t, :n])
            np.tanh(c[:n], out=tc[:n])
            K.lstm_forward_out(wst, tc[:n], h[:n], hs[t, :n])
        return hs, h, cs, c, ws

    @staticmethod
    def fused_vjp(ctx, ghs, ghT, gcs, gcT, gws, *, reverse, batch_sizes):
        K = _kernels()
        h0, c0, w, hs, _, cs, _, ws = ctx.saved_arrays()
        T, B, H = hs.shape
        bs = _sizes(batch_sizes, T, B)
        dh = np.zeros((B, H), hs.dtype) if ghT is None else np.array(ghT, dtype=hs.dtype)
        dc = np.zeros((B, H), hs.dtype) if gcT is None else np.array(gcT, dtype=hs.dtype)
        da = np.zeros((T, B, 4 * H), hs.dtype)
        cp = _prev_array(cs, np.asarray(c0, dtype=hs.dtype), reverse, bs)
        has = gws is not None
        g = gws if has else np.zeros((0, 0), hs.dtype)
        w = np.ascontiguousarray(w)
        tc = np.tanh(cs)
        for t in _steps(T, not reverse):
            n = bs[t]
            if ghs is not None:
                dh[:n] += ghs[t, :n]
            if gcs is not None:
                dc[:n] += gcs[t, :n]
            K.lstm_backward_step(
                dh[:n],
                dc[:n],
                ws[t, :n],
                tc[t, :n],
                cp[t, :n],
                g[t, :n] if has else g,
                has,
                da[t, :n],
            )
            np.matmul(da[t, :n], w, out=dh[:n])
        dxp, dh0, dw, db = _array_weight_grads(ctx, da, da, hs, h0, reverse, bs, dh, 3)
        return dxp, dh0, dc, dw, db

    @staticmethod
    def vjp(ctx, ghs, ghT, gcs, gcT, gws, *, reverse, batch_sizes):
        h0, c0, w, hs, _, cs, _, ws = _saved(ctx, 3, 5)
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        dh = _zeros_like(h0) if ghT is None else ghT
        dc = _zeros_like(c0) if gcT is None else gcT
        das = [None] * T
        for t in _steps(T, not reverse):
            n = bs[t]
            d = _rows(dh, n, B)
            dct = _rows(dc, n, B)
            if ghs is not None:
                d = d + _rows(ghs[t], n, B)
            if gcs is not None:
                dct = dct + _rows(gcs[t], n, B)
            gi, gf, gg, go = F.chunk(_rows(ws[t], n, B), 4, -1)
            cp = _rows(_prev_tensor(cs, c0, t, reverse, bs, B), n, B)
            tc = F.tanh(_rows(cs[t], n, B))
            dgo = d * tc
            dct = dct + d * go * (1.0 - tc * tc)
            dgi = dct * gg
            dgf = dct * cp
            dgg = dct * gi
            if gws is not None:
                wi, wf, wg, wo = F.chunk(_rows(gws[t], n, B), 4, -1)
                dgi, dgf, dgg, dgo = dgi + wi, dgf + wf, dgg + wg, dgo + wo
            da = F.cat(
                [
                    dgi * gi * (1.0 - gi),
                    dgf * gf * (1.0 - gf),
                    dgg * (1.0 - gg * gg),
                    dgo * go * (1.0 - go),
                ],
                -1,
            )
            das[t] = _pad_rows(da, n, B)
            dh = _merge(F.matmul(da, w), dh, n, B)
            dc = _merge(dct * gf, dc, n, B)
        d_all = F.stack(das, 0)
        hp = F.stack([_prev_tensor(hs, h0, t, reverse, bs, B) for t in range(T)], 0)
        dw, db = _weight_grads(ctx, d_all, hp, 3, 4)
        return d_all, dh, dc, dw, db

    @staticmethod
    def jvp(primals, tangents, out, *, reverse, batch_sizes):
        _, h0, c0, w, _ = primals
        txp, th, tc, tw, tb = tangents
        hs, _, cs, _, ws = out
        T, B = hs.shape[0], hs.shape[1]
        bs = _sizes(batch_sizes, T, B)
        ths, tcs, tws = [None] * T, [None] * T, [None] * T
        for t in _steps(T, reverse):
            n = bs[t]
            hp = _rows(_prev_tensor(hs, h0, t, reverse, bs, B), n, B)
            cp = _rows(_prev_tensor(cs, c0, t, reverse, bs, B), n, B)
            gi, gf, gg, go = F.chunk(_rows(ws[t], n, B), 4, -1)
            ta = _sum_terms(
                None if txp is None else _rows(txp[t], n, B),
                _recurrent_tangent(th, hp, w, tw, tb, n, B),
            )
            if ta is None:
                ta = zeros((hp.shape[0], 4 * hp.shape[1]), dtype=hp.dtype)
            ai, af, ag, ao = F.chunk(ta, 4, -1)
            ti = ai * gi * (1.0 - gi)
            tf = af * gf * (1.0 - gf)
            tg = ag * (1.0 - gg * gg)
            to = ao * go * (1.0 - go)
            tcn = _sum_terms(
                tf * cp, None if tc is None else gf * _rows(tc, n, B), ti * gg, gi * tg
            )
            thc = F.tanh(_rows(cs[t], n, B))
            thn = to * thc + go * (1.0 - thc * thc) * tcn
            ths[t] = _pad_rows(thn, n, B)
            tcs[t] = _pad_rows(tcn, n, B)
            tws[t] = _pad_rows(F.cat([ti, tf, tg, to], -1), n, B)
            th = _merge(thn, th if th is not None else _zeros_like(h0), n, B)
            tc = _merge(tcn, tc if tc is not None else _zeros_like(c0), n, B)
        return F.stack(ths, 0), th, F.stack(tcs, 0), tc, F.stack(tws, 0)


def rnn_layer(mode, xp, h0, c0, w_hh, b_hh, *, reverse=False, batch_sizes=None):
    """One layer and direction: ``(hs, hT, cT)`` (``cT`` None but for the LSTM) from the
    input projections ``xp`` (``T, B, G*H``). ``mode``: ``'RNN_TANH'``, ``'RNN_RELU'``,
    ``'GRU'`` or ``'LSTM'``."""
    if xp.ndim != 3:
        raise RuntimeError(
            f"rnn_layer: the input projections must be (T, B, G*H), got shape "
            f"{list(xp.shape)} (nn.{'LSTM' if mode == 'LSTM' else mode.split('_')[0]} adds the "
            "batch dimension of an unbatched input itself)"
        )
    hid = (xp.shape[1], w_hh.shape[1])
    for name, st in (("h0", h0), ("c0", c0)):
        if st is not None and tuple(st.shape) != hid:  # (the kernels check nothing)
            raise RuntimeError(
                f"rnn_layer: Expected {name} of size {list(hid)} (batch, hidden), got "
                f"{list(st.shape)}"
            )
    if xp.dtype == _D.float16:  # the cell kernels run in float32 (Numba has no float16)

        def up(t):
            return t.float() if isinstance(t, Tensor) else t

        out = rnn_layer(
            mode,
            up(xp),
            up(h0),
            up(c0),
            up(w_hh),
            up(b_hh),
            reverse=reverse,
            batch_sizes=batch_sizes,
        )
        return tuple(None if o is None else o.half() for o in out)
    b = 0.0 if b_hh is None else b_hh
    bs = None if batch_sizes is None else tuple(int(s) for s in batch_sizes)
    if mode == "LSTM":
        hs, hT, _, cT, _ = bind(
            LstmLayer, (xp, h0, c0, w_hh, b), {"reverse": reverse, "batch_sizes": bs}
        )
        return hs, hT, cT
    if mode == "GRU":
        hs, hT, _ = bind(GruLayer, (xp, h0, w_hh, b), {"reverse": reverse, "batch_sizes": bs})
        return hs, hT, None
    nl = "relu" if mode == "RNN_RELU" else "tanh"
    hs, hT = bind(
        RnnLayer,
        (xp, h0, w_hh, b),
        {"nonlinearity": nl, "reverse": reverse, "batch_sizes": bs},
    )
    return hs, hT, None
