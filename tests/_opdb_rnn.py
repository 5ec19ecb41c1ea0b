"""Op database entries for the fused recurrence primitives (``RnnLayer``, ``GruLayer``,
``LstmLayer``; joined into ``_opdb.op_db``).

Each entry runs one layer over a short sequence, ``(output, h_n[, c_n])``, through the same
path as ``nn.RNN``/``GRU``/``LSTM`` (input projections with ``linear``, then the primitive per
direction); PyTorch's spelling is ``torch._VF.rnn_tanh``/``gru``/``lstm`` with the flat weight
list. The references are NumPy loops over the steps.
"""

import numpy as np
from _opdb import OpInfo, SampleInput

_s = SampleInput


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _ref_cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    gi = x @ w_ih.T + b_ih
    gh = h @ w_hh.T + b_hh
    if mode == "tanh":
        return np.tanh(gi + gh), None
    if mode == "relu":
        return np.maximum(gi + gh, 0.0), None
    if mode == "gru":
        H = h.shape[-1]
        r = _sig(gi[:, :H] + gh[:, :H])
        z = _sig(gi[:, H : 2 * H] + gh[:, H : 2 * H])
        n = np.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
        return (1 - z) * n + z * h, None
    a = gi + gh
    H = h.shape[-1]
    i, f, g, o = (
        _sig(a[:, :H]),
        _sig(a[:, H : 2 * H]),
        np.tanh(a[:, 2 * H : 3 * H]),
        _sig(a[:, 3 * H :]),
    )
    c = f * c + i * g
    return o * np.tanh(c), c


def _ref(mode):
    def ref(x, h0, *rest, bias=True):
        c0 = None
        if mode == "lstm":
            c0, rest = rest[0], rest[1:]
        k = 4 if bias else 2
        D = len(rest) // k
        outs, hn, cn = [], [], []
        for d in range(D):
            w = rest[k * d : k * d + k]
            if not bias:
                w = (*w, 0.0, 0.0)
            h, c = h0[d], None if c0 is None else c0[d]
            seq = [None] * x.shape[0]
            steps = range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            for t in steps:
                h, c = _ref_cell(mode, x[t], h, c, *w)
                seq[t] = h
            outs.append(np.stack(seq))
            hn.append(h)
            cn.append(c)
        out = np.concatenate(outs, -1)
        if mode == "lstm":
            return out, np.stack(hn), np.stack(cn)
        return out, np.stack(hn)

    return ref


def _op(mode):
    def op(m, x, h0, *rest, bias=True):
        k = 4 if bias else 2
        if m.__name__ == "torch":
            c0 = None
            if mode == "lstm":
                c0, rest = rest[0], rest[1:]
            D = len(rest) // k
            # (_VF checks neither the input's rank nor its features: nn.LSTM's checks)
            if x.dim() not in (2, 3):
                raise ValueError(f"Expected input to be 2D or 3D, got {x.dim()}D instead")
            if rest and x.shape[-1] != rest[0].shape[-1]:
                raise RuntimeError(
                    f"input.size(-1) must be equal to input_size. Expected "
                    f"{rest[0].shape[-1]}, got {x.shape[-1]}"
                )
            # _VF checks no state shape (an initial state of another batch size broadcasts
            # or corrupts the heap: fuzz seeds 701833, 802885): check as nn.LSTM does
            if x.dim() == 3 and len(rest) >= 2:
                want = (D, x.shape[1], rest[1].shape[-1])
                for st in (h0, c0):
                    if st is not None and tuple(st.shape) != want:
                        raise RuntimeError(f"Expected hidden size {want}, got {list(st.shape)}")
            if mode == "lstm":
                out, h, c = m._VF.lstm(x, (h0, c0), list(rest), bias, 1, 0.0, False, D == 2, False)
                return out, h, c
            fn = {"tanh": m._VF.rnn_tanh, "relu": m._VF.rnn_relu, "gru": m._VF.gru}[mode]
            return tuple(fn(x, h0, list(rest), bias, 1, 0.0, False, D == 2, False))
        from numbagrad.nn._rnn import rnn_layer

        c0 = None
        if mode == "lstm":
            c0, rest = rest[0], rest[1:]
        D = len(rest) // k
        name = {"tanh": "RNN_TANH", "relu": "RNN_RELU", "gru": "GRU", "lstm": "LSTM"}[mode]
        outs, hn, cn = [], [], []
        for d in range(D):
            w_ih, w_hh, b_ih, b_hh = (*rest[k * d : k * d + k], None, None)[:4]
            xp = m.nn.functional.linear(x, w_ih, b_ih)
            hs, h, c = rnn_layer(
                name, xp, h0[d], None if c0 is None else c0[d], w_hh, b_hh, reverse=d == 1
            )
            outs.append(hs)
            hn.append(h)
            cn.append(c)
        out = outs[0] if D == 1 else m.cat(outs, -1)
        if mode == "lstm":
            return out, m.stack(hn), m.stack(cn)
        return out, m.stack(hn)

    return op


def _samples(mode, gates):
    def samples(rng):
        T, B, n_in, H = 3, 2, 2, 3
        out = []
        for D in (1, 2):
            args = [rng.uniform(-1, 1, (T, B, n_in)), rng.uniform(-1, 1, (D, B, H))]
            if mode == "lstm":
                args.append(rng.uniform(-1, 1, (D, B, H)))
            for _ in range(D):
                args += [
                    rng.uniform(-0.8, 0.8, (gates * H, n_in)),
                    rng.uniform(-0.8, 0.8, (gates * H, H)),
                    rng.uniform(-0.5, 0.5, (gates * H,)),
                    rng.uniform(-0.5, 0.5, (gates * H,)),
                ]
            out.append(_s(*args, name="bidirectional" if D == 2 else "one direction"))
        # small enough for gradgradcheck (at most 16 elements): no biases, width 1
        small = [rng.uniform(-1, 1, (2, 1, 1)), rng.uniform(-1, 1, (1, 1, 1))]
        if mode == "lstm":
            small.append(rng.uniform(-1, 1, (1, 1, 1)))
        small += [rng.uniform(-0.8, 0.8, (gates, 1)), rng.uniform(-0.8, 0.8, (gates, 1))]
        out.append(_s(*small, bias=False, name="small, no bias"))
        return out

    return samples


_COMMON = ("Add", "Cat", "Index", "Matmul", "Permute", "Reshape")

op_db = [
    OpInfo(
        "nn._rnn_tanh",
        _ref("tanh"),
        _samples("tanh", 1),
        op=_op("tanh"),
        primitives=("RnnLayer", *_COMMON),
    ),
    OpInfo(
        "nn._rnn_relu",
        _ref("relu"),
        _samples("relu", 1),
        op=_op("relu"),
        primitives=("RnnLayer", *_COMMON),
    ),
    OpInfo(
        "nn._gru",
        _ref("gru"),
        _samples("gru", 3),
        op=_op("gru"),
        primitives=("GruLayer", *_COMMON),
    ),
    OpInfo(
        "nn._lstm",
        _ref("lstm"),
        _samples("lstm", 4),
        op=_op("lstm"),
        primitives=("LstmLayer", *_COMMON),
    ),
]
