"""Recurrent layers, attention, the Transformer and the remaining activations, dropouts and
losses against PyTorch: values, gradients, state_dict round trips, double backward for the
recurrent cells, packed sequences, errors (issue 28)."""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")
from torch.nn.utils import rnn as trnn  # noqa: E402

from numbagrad.nn.utils import rnn as nrnn  # noqa: E402


def conv(t):
    return ng.tensor(t.detach().numpy())


def leaf(t):
    return ng.tensor(t.detach().numpy(), requires_grad=True)


def close(a, b, tol=1e-9, rtol=1e-7):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(b, a, atol=tol, rtol=rtol, equal_nan=True)


def copy_weights(tm, nm):
    assert list(tm.state_dict()) == list(nm.state_dict())
    nm.load_state_dict({k: conv(v) for k, v in tm.state_dict().items()})


# -- recurrent layers ---------------------------------------------------------------------
RNN_CONFIGS = [
    ("RNN", {}),
    ("RNN", {"num_layers": 2, "bidirectional": True, "nonlinearity": "relu"}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("LSTM", {"bias": False}),
]


@pytest.mark.parametrize("with_hx", [True, False])
@pytest.mark.parametrize("name,kw", RNN_CONFIGS, ids=lambda v: str(v))
def test_rnn_modules_match_torch(name, kw, with_hx):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(3, 5, **kw).double()
    nm = getattr(ng.nn, name)(3, 5, **kw).double()
    copy_weights(tm, nm)
    L = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    B, T = 4, 6
    x = torch.randn(*((B, T, 3) if kw.get("batch_first") else (T, B, 3)), dtype=torch.float64)
    x.requires_grad_()
    nx = leaf(x)
    hout = kw.get("proj_size") or 5
    targs, nargs = (x,), (nx,)
    if with_hx:
        h0 = torch.randn(L, B, hout, dtype=torch.float64, requires_grad=True)
        if name == "LSTM":
            c0 = torch.randn(L, B, 5, dtype=torch.float64, requires_grad=True)
            targs += ((h0, c0),)
            nargs += ((leaf(h0), leaf(c0)),)
        else:
            targs += (h0,)
            nargs += (leaf(h0),)
    ot, ht = tm(*targs)
    on, hn = nm(*nargs)
    close(ot, on)
    if name == "LSTM":
        close(ht[0], hn[0])
        close(ht[1], hn[1])
        lt = (ot**2).sum() + (ht[0] ** 3).sum() + (ht[1] * 2).sum()
        ln = (on**2).sum() + (hn[0] ** 3).sum() + (hn[1] * 2).sum()
    else:
        close(ht, hn)
        lt, ln = (ot**2).sum() + (ht**3).sum(), (on**2).sum() + (hn**3).sum()
    lt.backward()
    ln.backward()
    close(x.grad, nx.grad)
    nparams = dict(nm.named_parameters())
    for k, p in tm.named_parameters():
        close(p.grad, nparams[k].grad)
    if with_hx:
        tl = targs[1] if name != "LSTM" else targs[1][0]
        nl = nargs[1] if name != "LSTM" else nargs[1][0]
        close(tl.grad, nl.grad)


def test_rnn_float32_and_unbatched():
    torch.manual_seed(1)
    tm, nm = torch.nn.GRU(3, 4, num_layers=2), ng.nn.GRU(3, 4, num_layers=2)
    copy_weights(tm, nm)
    x = torch.randn(7, 3)
    ot, ht = tm(x)
    on, hn = nm(conv(x))
    assert on.dtype == ng.float32 and tuple(on.shape) == (7, 4) and tuple(hn.shape) == (2, 4)
    close(ot, on, tol=1e-5, rtol=1e-4)
    close(ht, hn, tol=1e-5, rtol=1e-4)


def test_rnn_state_dict_round_trip_and_init():
    ng.manual_seed(0)
    nm = ng.nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=4)
    tm = torch.nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=4)
    assert [(k, tuple(v.shape)) for k, v in tm.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in nm.state_dict().items()
    ]
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in nm.state_dict().items()})
    x = torch.randn(5, 2, 3)
    close(tm(x)[0], nm(conv(x))[0], tol=1e-5, rtol=1e-4)
    bound = 1 / np.sqrt(8)
    for p in nm.parameters():
        assert np.abs(p.detach().numpy()).max() <= bound
    assert repr(nm) == repr(tm)
    assert repr(ng.nn.RNN(2, 3, nonlinearity="relu", dropout=0.5, num_layers=2)) == repr(
        torch.nn.RNN(2, 3, nonlinearity="relu", dropout=0.5, num_layers=2)
    )


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_sequences(name, bidirectional):
    torch.manual_seed(2)
    tm = getattr(torch.nn, name)(3, 4, num_layers=2, bidirectional=bidirectional).double()
    nm = getattr(ng.nn, name)(3, 4, num_layers=2, bidirectional=bidirectional).double()
    copy_weights(tm, nm)
    x = torch.randn(5, 4, 3, dtype=torch.float64, requires_grad=True)
    nx = leaf(x)
    lens = [3, 5, 1, 4]
    pt = trnn.pack_padded_sequence(x, lens, enforce_sorted=False)
    pn = nrnn.pack_padded_sequence(nx, lens, enforce_sorted=False)
    close(pt.data, pn.data)
    close(pt.batch_sizes, pn.batch_sizes)
    close(pt.sorted_indices, pn.sorted_indices)
    ot, ht = tm(pt)
    on, hn = nm(pn)
    assert isinstance(on, nrnn.PackedSequence)
    close(ot.data, on.data)
    pt2, lt = trnn.pad_packed_sequence(ot, batch_first=True, total_length=6)
    pn2, ln = nrnn.pad_packed_sequence(on, batch_first=True, total_length=6)
    close(pt2, pn2)
    close(lt, ln)
    if name == "LSTM":
        ht, hn = ht[0] * ht[1], hn[0] * hn[1]
    close(ht, hn)
    (pt2.sum() + (ht**2).sum()).backward()
    (pn2.sum() + (hn**2).sum()).backward()
    close(x.grad, nx.grad)


def test_pad_and_pack_sequence_helpers():
    seqs = [torch.randn(3, 2), torch.randn(1, 2), torch.randn(2, 2)]
    nseqs = [conv(s) for s in seqs]
    for kw in ({"batch_first": True, "padding_value": -1.0}, {"padding_side": "left"}, {}):
        close(trnn.pad_sequence(seqs, **kw), nrnn.pad_sequence(nseqs, **kw))
    pt = trnn.pack_sequence(seqs, enforce_sorted=False)
    pn = nrnn.pack_sequence(nseqs, enforce_sorted=False)
    close(pt.data, pn.data)
    for a, b in zip(trnn.unpack_sequence(pt), nrnn.unpack_sequence(pn), strict=True):
        close(a, b)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        nrnn.pack_sequence(nseqs)
    with pytest.raises(ValueError, match="total_length"):
        nrnn.pad_packed_sequence(pn, total_length=2)


@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell", "LSTMCell"])
def test_cells_match_torch_and_double_backward(cell):
    torch.manual_seed(3)
    tm = getattr(torch.nn, cell)(3, 4).double()
    nm = getattr(ng.nn, cell)(3, 4).double()
    copy_weights(tm, nm)
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    c = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    nx, nh, nc = leaf(x), leaf(h), leaf(c)
    if cell == "LSTMCell":
        ot = tm(x, (h, c))
        on = nm(nx, (nh, nc))
        close(ot[0], on[0])
        close(ot[1], on[1])
        ot, on = ot[0] * ot[1], on[0] * on[1]
    else:
        ot, on = tm(x, h), nm(nx, nh)
        close(ot, on)
    # double backward: the gradient of a gradient norm
    gt = torch.autograd.grad((ot**2).sum(), (x, h), create_graph=True)
    gn = ng.autograd.grad((on**2).sum(), (nx, nh), create_graph=True)
    for a, b in zip(gt, gn, strict=True):
        close(a, b)
    tt = sum((g**2).sum() for g in gt)
    tn = sum((g**2).sum() for g in gn)
    ggt = torch.autograd.grad(tt, (x, h, tm.weight_hh))
    ggn = ng.autograd.grad(tn, (nx, nh, nm.weight_hh))
    for a, b in zip(ggt, ggn, strict=True):
        close(a, b, tol=1e-8)
    # unbatched
    assert tuple(nm(nx[0])[0].shape if cell == "LSTMCell" else nm(nx[0]).shape) == (4,)


@pytest.mark.parametrize("cell", [ng.nn.RNNCell, ng.nn.GRUCell, ng.nn.LSTMCell])
def test_cells_gradcheck_gradgradcheck(cell):
    c = cell(2, 3).double()
    x = ng.randn(2, 2, dtype=ng.float64, requires_grad=True)
    h = ng.randn(2, 3, dtype=ng.float64, requires_grad=True)
    extra = (
        (ng.randn(2, 3, dtype=ng.float64, requires_grad=True),) if cell is ng.nn.LSTMCell else ()
    )

    def f(x, h, *rest):
        out = c(x, (h, *rest) if rest else h)
        return out[0] * out[1] if isinstance(out, tuple) else out

    assert ng.autograd.gradcheck(f, (x, h, *extra))
    assert ng.autograd.gradgradcheck(f, (x, h, *extra))


def test_rnn_vmap_and_jvp_through_modules():
    gru = ng.nn.GRU(2, 3).double()
    xs = ng.randn(4, 5, 2, 2, dtype=ng.float64)
    batched = ng.vmap(lambda x: gru(x)[0])(xs)
    loop = ng.stack([gru(x)[0] for x in xs])
    close(loop, batched)


def test_rnn_dropout_between_layers_and_errors():
    m = ng.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = ng.randn(5, 2, 3)
    ng.manual_seed(0)
    a = m(x)[0]
    ng.manual_seed(1)
    b = m(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        ng.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        ng.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        ng.nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number"):
        ng.nn.GRU(3, 4, dropout=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ng.nn.GRU(3, 4, dropout=0.2)
    assert any("non-zero dropout" in str(x.message) for x in w)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
        ng.nn.GRU(3, 4)(ng.randn(5, 2, 2))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        ng.nn.GRU(3, 4)(ng.randn(5))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        ng.nn.GRU(3, 4)(ng.randn(5, 2, 3), ng.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="hx should also be 3-D"):
        ng.nn.GRU(3, 4)(ng.randn(5, 2, 3), ng.zeros(2, 4))


# -- attention ------------------------------------------------------------------------------
SDPA_CASES = [
    {},
    {"is_causal": True},
    {"attn_mask": "bool"},
    {"attn_mask": "float", "scale": 0.3},
]


@pytest.mark.parametrize("case", SDPA_CASES, ids=str)
def test_scaled_dot_product_attention(case):
    torch.manual_seed(4)
    q = torch.randn(2, 4, 5, 8, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 2, 7, 8, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 2, 7, 6, dtype=torch.float64, requires_grad=True)
    kw = dict(case)
    if kw.get("attn_mask") == "bool":
        m = torch.rand(5, 7) > 0.4
        m[1] = False  # a row with nothing to attend to: zeros, as PyTorch
        kw["attn_mask"] = m
    elif kw.get("attn_mask") == "float":
        kw["attn_mask"] = torch.randn(2, 1, 5, 7, dtype=torch.float64)
    nkw = {a: conv(b) if isinstance(b, torch.Tensor) else b for a, b in kw.items()}
    nq, nk, nv = leaf(q), leaf(k), leaf(v)
    ot = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
    on = ng.nn.functional.scaled_dot_product_attention(nq, nk, nv, enable_gqa=True, **nkw)
    close(ot, on)
    (ot**2).sum().backward()
    (on**2).sum().backward()
    for a, b in zip((q, k, v), (nq, nk, nv), strict=True):
        close(a.grad, b.grad)


def test_sdpa_dropout_and_errors():
    q = ng.randn(2, 3, 4)
    out = ng.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert tuple(out.shape) == (2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask"):
        ng.nn.functional.scaled_dot_product_attention(
            q, q, q, attn_mask=ng.ones(3, 3, dtype=ng.bool), is_causal=True
        )
    with pytest.raises(RuntimeError, match="must divide"):
        ng.nn.functional.scaled_dot_product_attention(
            ng.randn(1, 3, 2, 4), ng.randn(1, 2, 2, 4), ng.randn(1, 2, 2, 4), enable_gqa=True
        )


MHA_CONFIGS = [
    {},
    {"batch_first": True},
    {"kdim": 5, "vdim": 3},
    {"add_bias_kv": True, "add_zero_attn": True},
    {"bias": False},
]


@pytest.mark.parametrize("kw", MHA_CONFIGS, ids=str)
def test_multihead_attention(kw):
    torch.manual_seed(5)
    tm = torch.nn.MultiheadAttention(8, 2, **kw).double()
    nm = ng.nn.MultiheadAttention(8, 2, **kw).double()
    copy_weights(tm, nm)
    L, S, B = 4, 6, 3

    def shp(n, e):
        return (B, n, e) if kw.get("batch_first") else (n, B, e)

    x = torch.randn(*shp(L, 8), dtype=torch.float64, requires_grad=True)
    kk = torch.randn(*shp(S, kw.get("kdim", 8)), dtype=torch.float64)
    vv = torch.randn(*shp(S, kw.get("vdim", 8)), dtype=torch.float64)
    kpm = torch.rand(B, S) > 0.7
    kpm[:, 0] = False
    am = torch.randn(L, S, dtype=torch.float64)
    for need, avg in ((True, True), (True, False), (False, True)):
        nx = leaf(x)
        x.grad = None
        ot, wt = tm(
            x,
            kk,
            vv,
            key_padding_mask=kpm,
            attn_mask=am,
            need_weights=need,
            average_attn_weights=avg,
        )
        on, wn = nm(
            nx,
            conv(kk),
            conv(vv),
            key_padding_mask=conv(kpm),
            attn_mask=conv(am),
            need_weights=need,
            average_attn_weights=avg,
        )
        close(ot, on)
        if need:
            close(wt, wn)
        else:
            assert wn is None
        ot.sum().backward()
        on.sum().backward()
        close(x.grad, nx.grad)
    if "kdim" not in kw:
        close(tm(x, x, x)[0], nm(conv(x), conv(x), conv(x))[0])
        # a boolean attn_mask (True: masked out) and the unbatched form
        bm = torch.rand(L, L) > 0.6
        bm.fill_diagonal_(False)
        close(tm(x, x, x, attn_mask=bm)[0], nm(conv(x), conv(x), conv(x), attn_mask=conv(bm))[0])
        xu = x[0] if kw.get("batch_first") else x[:, 0]
        close(tm(xu, xu, xu)[0], nm(conv(xu), conv(xu), conv(xu))[0])
    assert repr(nm) == repr(tm)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
def test_transformer_layers_and_model(norm_first, activation):
    torch.manual_seed(6)
    tact = torch.nn.functional.silu if activation == "callable" else activation
    nact = ng.nn.functional.silu if activation == "callable" else activation
    te = torch.nn.TransformerEncoderLayer(
        16, 4, 32, dropout=0.0, activation=tact, norm_first=norm_first
    ).double()
    ne = ng.nn.TransformerEncoderLayer(
        16, 4, 32, dropout=0.0, activation=nact, norm_first=norm_first
    ).double()
    copy_weights(te, ne)
    x = torch.randn(5, 3, 16, dtype=torch.float64, requires_grad=True)
    nx = leaf(x)
    m = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    nmask = ng.nn.Transformer.generate_square_subsequent_mask(5, dtype=ng.float64)
    close(m, nmask)
    ot = te(x, src_mask=m, is_causal=True)
    on = ne(nx, src_mask=nmask, is_causal=True)
    close(ot, on)
    (ot**2).sum().backward()
    (on**2).sum().backward()
    close(x.grad, nx.grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tt = torch.nn.Transformer(
            16, 4, 2, 2, 32, dropout=0.0, activation=tact, norm_first=norm_first
        ).double()
    nt = ng.nn.Transformer(
        16, 4, 2, 2, 32, dropout=0.0, activation=nact, norm_first=norm_first
    ).double()
    copy_weights(tt, nt)
    src = torch.randn(7, 3, 16, dtype=torch.float64)
    tgt = torch.randn(5, 3, 16, dtype=torch.float64)
    kpm = torch.rand(3, 7) > 0.7
    kpm[:, 0] = False
    close(
        tt(src, tgt, tgt_mask=m, src_key_padding_mask=kpm, memory_key_padding_mask=kpm),
        nt(
            conv(src),
            conv(tgt),
            tgt_mask=nmask,
            src_key_padding_mask=conv(kpm),
            memory_key_padding_mask=conv(kpm),
        ),
    )


def test_transformer_batch_first_decoder_and_errors():
    torch.manual_seed(7)
    td = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    nd = ng.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    copy_weights(td, nd)
    tgt, mem = torch.randn(2, 4, 8, dtype=torch.float64), torch.randn(2, 6, 8, dtype=torch.float64)
    close(td(tgt, mem), nd(conv(tgt), conv(mem)))
    nt = ng.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        nt(ng.randn(3, 2, 8), ng.randn(3, 3, 8))
    with pytest.raises(RuntimeError, match="feature number"):
        nt(ng.randn(3, 2, 8), ng.randn(3, 2, 4))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        ng.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        ng.nn.MultiheadAttention(7, 2)


# -- activations, dropouts, losses ------------------------------------------------------------
ACTIVATIONS = [
    ("celu", {"alpha": 1.5}),
    ("glu", {"dim": 1}),
    ("hardshrink", {"lambd": 0.3}),
    ("softshrink", {"lambd": 0.3}),
    ("tanhshrink", {}),
    ("hardsigmoid", {}),
    ("hardswish", {}),
    ("threshold", {"threshold": 0.1, "value": -2.0}),
    ("rrelu", {"training": False}),
]


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_functionals(name, kw):
    rng = np.random.default_rng(8)
    a = rng.uniform(-4, 4, (3, 4))
    a[np.abs(np.abs(a) - 3) < 0.1] += 0.3  # away from the kinks
    x = torch.tensor(a, requires_grad=True)
    nx = leaf(x)
    ot = getattr(torch.nn.functional, name)(x, **kw)
    on = getattr(ng.nn.functional, name)(nx, **kw)
    close(ot, on)
    (ot**2).sum().backward()
    (on**2).sum().backward()
    close(x.grad, nx.grad)


def test_activation_modules_and_prelu():
    torch.manual_seed(9)
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    nx = leaf(x)
    for name, args in [
        ("PReLU", (3,)),
        ("CELU", ()),
        ("GLU", ()),
        ("Hardswish", ()),
        ("Hardsigmoid", ()),
        ("Hardshrink", ()),
        ("Softshrink", ()),
        ("Tanhshrink", ()),
        ("Threshold", (0.2, 0.0)),
        ("RReLU", ()),
        ("Softmax2d", ()),
    ]:
        tm, nm = getattr(torch.nn, name)(*args).double(), getattr(ng.nn, name)(*args).double()
        tm.eval()
        nm.eval()
        assert repr(tm) == repr(nm)
        if list(tm.state_dict()):
            copy_weights(tm, nm)
        close(tm(x), nm(nx))
    w = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    nw = leaf(w)
    torch.nn.functional.prelu(x, w).sum().backward()
    ng.nn.functional.prelu(nx, nw).sum().backward()
    close(w.grad, nw.grad)


def test_channel_dropouts():
    ng.manual_seed(0)
    x = ng.ones(8, 6, 5, 5)
    for fn, shape in [
        (ng.nn.functional.dropout2d, (8, 6, 5, 5)),
        (ng.nn.functional.dropout1d, (8, 6, 5)),
        (ng.nn.functional.dropout3d, (8, 6, 2, 5, 5)),
    ]:
        y = fn(ng.ones(*shape), 0.5).numpy().reshape(8, 6, -1)
        assert set(np.unique(y)) <= {0.0, 2.0}
        assert (y.min(-1) == y.max(-1)).all()  # whole channels
        assert (
            fn(x[..., 0] if fn is ng.nn.functional.dropout1d else x, 0.5, training=False)
            is not None
        )
    y = ng.nn.functional.alpha_dropout(ng.randn(20000), 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    y = ng.nn.functional.feature_alpha_dropout(ng.ones(4, 3, 5), 0.5, training=True).numpy()
    assert (y.min(-1) == y.max(-1)).all()
    m = ng.nn.Dropout2d(0.3)
    assert repr(m) == repr(torch.nn.Dropout2d(0.3))
    assert m.eval()(x) is x


def _loss_args(name, rng):
    a = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    b = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    sign = torch.tensor(rng.choice([-1.0, 1.0], (4,)))
    if name == "margin_ranking_loss":
        a1 = torch.tensor(rng.standard_normal(4), requires_grad=True)
        b1 = torch.tensor(rng.standard_normal(4), requires_grad=True)
        return (a1, b1, sign), {"margin": 0.2}
    if name == "hinge_embedding_loss":
        return (a, torch.tensor(rng.choice([-1.0, 1.0], (4, 5)))), {"margin": 0.5}
    if name == "soft_margin_loss":
        return (a, torch.tensor(rng.choice([-1.0, 1.0], (4, 5)))), {}
    if name == "cosine_embedding_loss":
        return (a, b, sign), {"margin": 0.1}
    if name == "triplet_margin_loss":
        c = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
        return (a, b, c), {"swap": True, "p": 1.5}
    if name == "poisson_nll_loss":
        t = torch.tensor(rng.poisson(2.0, (4, 5)).astype(float))
        return (a, t), {"full": True}
    if name == "multilabel_soft_margin_loss":
        t = torch.tensor(rng.integers(0, 2, (4, 5)).astype(float))
        return (a, t), {"weight": torch.tensor(rng.uniform(0.5, 1.5, 5))}
    if name == "multi_margin_loss":
        return (a, torch.tensor(rng.integers(0, 5, (4,)))), {
            "p": 2,
            "margin": 0.7,
            "weight": torch.rand(5, dtype=torch.float64),
        }
    if name == "multilabel_margin_loss":
        return (
            a,
            torch.tensor([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 2, 2, 2]]),
        ), {}
    raise AssertionError(name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "name",
    [
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "soft_margin_loss",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "poisson_nll_loss",
        "multilabel_soft_margin_loss",
        "multi_margin_loss",
        "multilabel_margin_loss",
    ],
)
def test_losses(name, reduction):
    rng = np.random.default_rng(10)
    args, kw = _loss_args(name, rng)
    nargs = tuple(leaf(a) if a.requires_grad else conv(a) for a in args)
    nkw = {k: conv(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    ot = getattr(torch.nn.functional, name)(*args, reduction=reduction, **kw)
    on = getattr(ng.nn.functional, name)(*nargs, reduction=reduction, **nkw)
    close(ot, on)
    ot.sum().backward()
    on.sum().backward()
    for a, b in zip(args, nargs, strict=True):
        if a.requires_grad:
            close(a.grad, b.grad)


def test_loss_modules():
    rng = np.random.default_rng(11)
    for cls, name in [
        ("MarginRankingLoss", "margin_ranking_loss"),
        ("HingeEmbeddingLoss", "hinge_embedding_loss"),
        ("SoftMarginLoss", "soft_margin_loss"),
        ("CosineEmbeddingLoss", "cosine_embedding_loss"),
        ("TripletMarginLoss", "triplet_margin_loss"),
        ("PoissonNLLLoss", "poisson_nll_loss"),
        ("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss"),
        ("MultiMarginLoss", "multi_margin_loss"),
        ("MultiLabelMarginLoss", "multilabel_margin_loss"),
        ("TripletMarginWithDistanceLoss", "triplet_margin_loss"),
    ]:
        args, _ = _loss_args(name, rng)
        tl, nl = getattr(torch.nn, cls)(), getattr(ng.nn, cls)()
        close(tl(*args), nl(*(conv(a) for a in args)))


def test_module_paths_import():
    import importlib

    for mod, names in [
        ("rnn", ["GRU", "LSTM", "RNN", "RNNCell"]),
        ("transformer", ["Transformer", "TransformerEncoderLayer"]),
        ("activation", ["MultiheadAttention", "ReLU", "PReLU"]),
        ("linear", ["Linear", "Identity"]),
        ("dropout", ["Dropout", "Dropout2d"]),
        ("sparse", ["Embedding"]),
        ("loss", ["MSELoss", "TripletMarginLoss"]),
        ("container", ["Sequential"]),
        ("module", ["Module"]),
    ]:
        m = importlib.import_module(f"numbagrad.nn.modules.{mod}")
        for n in names:
            assert getattr(m, n) is getattr(ng.nn, n)
    assert ng.nn.utils.rnn.PackedSequence is nrnn.PackedSequence


def test_fused_recurrence_rejects_cuda_arrays_by_name():
    from numbagrad.nn._rnn import _cpu_only

    class FakeBackend:
        xp = object()

    with pytest.raises(NotImplementedError, match="GruLayer"):
        _cpu_only(FakeBackend, "GruLayer")


# -- parametrizations ---------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    from torch.nn.utils import parametrizations as tp

    from numbagrad.nn.utils import parametrizations as npz

    tm = tp.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    nm = npz.weight_norm(ng.nn.Linear(4, 3).double(), dim=dim)
    copy_weights(tm, nm)
    assert repr(tm) == repr(nm)
    x = torch.randn(2, 4, dtype=torch.float64)
    ot, on = tm(x), nm(conv(x))
    close(ot, on)
    ot.sum().backward()
    on.sum().backward()
    for k in ("original0", "original1"):
        close(
            getattr(tm.parametrizations.weight, k).grad, getattr(nm.parametrizations.weight, k).grad
        )
    ng.nn.utils.parametrize.remove_parametrizations(nm, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert type(nm) is ng.nn.Linear and list(nm.state_dict()) == list(tm.state_dict())
    close(tm.weight, nm.weight)


def test_spectral_norm_and_custom_parametrization():
    from torch.nn.utils import parametrizations as tp

    from numbagrad.nn.utils import parametrizations as npz
    from numbagrad.nn.utils import parametrize

    tm = tp.spectral_norm(torch.nn.Linear(5, 4).double())
    nm = npz.spectral_norm(ng.nn.Linear(5, 4).double())
    copy_weights(tm, nm)
    x = torch.randn(2, 5, dtype=torch.float64)
    for mode in ("train", "eval"):
        getattr(tm, mode)()
        getattr(nm, mode)()
        close(tm(x), nm(conv(x)))
        close(tm.parametrizations.weight[0]._u, nm.parametrizations.weight[0]._u)
    s = np.linalg.svd(nm.weight.detach().numpy(), compute_uv=False)
    assert abs(s[0] - 1) < 0.05

    class Symmetric(ng.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    m = ng.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert parametrize.is_parametrized(m, "weight")
    assert parametrize.type_before_parametrizations(m) is ng.nn.Linear
    w = m.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    m(ng.randn(2, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(m, "nothing", Symmetric())


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("case", ["2d", "1d", "1d_last"])
def test_embedding_bag(mode, padding_idx, case):
    torch.manual_seed(12)
    w = torch.randn(10, 3, dtype=torch.float64, requires_grad=True)
    nw = leaf(w)
    kw = {}
    if case == "2d":
        inp, off = torch.tensor([[1, 2, 4], [2, 2, 9]]), None
    else:
        inp = torch.tensor([1, 2, 4, 5, 2, 2, 9, 0])
        off = torch.tensor([0, 3, 3, 6] + ([8] if case == "1d_last" else []))
        kw["include_last_offset"] = case == "1d_last"
    psw = torch.rand(inp.shape, dtype=torch.float64, requires_grad=True) if mode == "sum" else None
    npsw = None if psw is None else leaf(psw)
    ot = torch.nn.functional.embedding_bag(
        inp, w, off, mode=mode, padding_idx=padding_idx, per_sample_weights=psw, **kw
    )
    on = ng.nn.functional.embedding_bag(
        conv(inp),
        nw,
        None if off is None else conv(off),
        mode=mode,
        padding_idx=padding_idx,
        per_sample_weights=npsw,
        **kw,
    )
    close(ot, on)
    (ot**2).sum().backward()
    (on**2).sum().backward()
    close(w.grad, nw.grad)
    if psw is not None:
        close(psw.grad, npsw.grad)
    tm = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    nm = ng.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    assert repr(tm) == repr(nm)
    copy_weights(tm, nm)
    close(tm(inp, off), nm(conv(inp), None if off is None else conv(off)), tol=1e-6)


def test_pdist_gumbel_softmax_and_distance_modules():
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    nx = leaf(x)
    for p in (2, 1, 3.0):
        ot, on = torch.nn.functional.pdist(x, p), ng.nn.functional.pdist(nx, p)
        close(ot, on)
        x.grad = nx.grad = None
        ot.sum().backward()
        on.sum().backward()
        close(x.grad, nx.grad)
    ng.manual_seed(0)
    y = ng.nn.functional.gumbel_softmax(ng.zeros(4000, 3, requires_grad=True), tau=0.5)
    np.testing.assert_allclose(y.detach().numpy().sum(-1), 1.0, rtol=1e-5)
    assert abs(y.detach().numpy().mean(0) - 1 / 3).max() < 0.03
    logits = ng.randn(6, 4, requires_grad=True)
    h = ng.nn.functional.gumbel_softmax(logits, hard=True, dim=1)
    assert set(np.unique(h.detach().numpy())) == {0.0, 1.0}
    (h * ng.arange(4.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    for name in ("CosineSimilarity", "PairwiseDistance"):
        tm, nm = getattr(torch.nn, name)(), getattr(ng.nn, name)()
        assert repr(tm) == repr(nm)
        close(tm(a, b), nm(conv(a), conv(b)), tol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_ctc_loss(reduction):
    torch.manual_seed(13)
    x = torch.randn(8, 3, 5, dtype=torch.float64, requires_grad=True)
    nx = leaf(x)
    tg = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [2, 2, 2, 2]])
    il, tl = [8, 6, 5], [4, 2, 4]  # the third is impossible: 4 labels, 3 repeats, 5 steps
    for zi in (False, True):
        ot = torch.nn.functional.ctc_loss(
            x.log_softmax(2), tg, il, tl, reduction=reduction, zero_infinity=zi
        )
        on = ng.nn.functional.ctc_loss(
            nx.log_softmax(2), conv(tg), il, tl, reduction=reduction, zero_infinity=zi
        )
        close(ot, on)
    x.grad = None
    ot.sum().backward()
    on.sum().backward()
    close(x.grad, nx.grad)
    flat = torch.tensor([1, 2, 2, 3, 4, 1])
    lp = x[:, :2].log_softmax(2)
    close(
        torch.nn.functional.ctc_loss(lp, flat, [8, 6], [4, 2], reduction="none"),
        ng.nn.functional.ctc_loss(conv(lp), conv(flat), [8, 6], [4, 2], reduction="none"),
    )
    close(
        torch.nn.CTCLoss()(lp, flat, [8, 6], [4, 2]),
        ng.nn.CTCLoss()(conv(lp), conv(flat), [8, 6], [4, 2]),
    )


def test_ctc_loss_double_backward():
    x = ng.randn(4, 1, 3, dtype=ng.float64, requires_grad=True)

    def f(x):
        return ng.nn.functional.ctc_loss(x.log_softmax(2), ng.tensor([[1, 2]]), [4], [2])

    assert ng.autograd.gradcheck(f, (x,))
    assert ng.autograd.gradgradcheck(f, (x,))


def test_channel_shuffle_nllloss2d_and_data_parallel():
    x = torch.randn(2, 6, 3, 2, dtype=torch.float64)
    for g in (1, 2, 3, 6):
        close(
            torch.nn.functional.channel_shuffle(x, g), ng.nn.functional.channel_shuffle(conv(x), g)
        )
        assert repr(torch.nn.ChannelShuffle(g)) == repr(ng.nn.ChannelShuffle(g))
    with pytest.raises(RuntimeError, match="divisible by groups"):
        ng.nn.functional.channel_shuffle(ng.zeros(2, 5, 3), 2)
    with pytest.raises(RuntimeError, match="> 2 dims"):
        ng.nn.functional.channel_shuffle(ng.zeros(2, 6), 2)
    assert repr(ng.nn.NLLLoss2d()) == repr(torch.nn.NLLLoss2d())
    lin = ng.nn.Linear(2, 3)
    dp = ng.nn.DataParallel(lin)
    assert repr(dp) == repr(torch.nn.DataParallel(torch.nn.Linear(2, 3)))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    z = ng.randn(4, 2)
    np.testing.assert_array_equal(dp(z).detach().numpy(), lin(z).detach().numpy())


@pytest.mark.parametrize(
    "shape,orthogonal_map",
    [((3, 3), None), ((3, 5), None), ((5, 3), None), ((4, 4), "cayley"), ((5, 3), "householder")],
)
def test_orthogonal_matches_torch(shape, orthogonal_map):
    from torch.nn.utils.parametrizations import orthogonal as t_orth

    from numbagrad.nn.utils.parametrizations import orthogonal as n_orth

    torch.manual_seed(14)
    tm = t_orth(torch.nn.Linear(shape[1], shape[0]).double(), orthogonal_map=orthogonal_map)
    nm = n_orth(ng.nn.Linear(shape[1], shape[0]).double(), orthogonal_map=orthogonal_map)
    copy_weights(tm, nm)
    w = nm.weight.detach().numpy()
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(0.1 * torch.randn(shape, dtype=torch.float64))
    with ng.no_grad():
        nm.parametrizations.weight.original.copy_(conv(tm.parametrizations.weight.original))
    close(tm.weight, nm.weight)
    tm.weight.sum().backward()
    nm.weight.sum().backward()
    close(tm.parametrizations.weight.original.grad, nm.parametrizations.weight.original.grad)
    with pytest.raises(NotImplementedError, match="geqrf"):
        n_orth(ng.nn.Linear(3, 5), orthogonal_map="householder", use_trivialization=False)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_saturated_sigmoid_gates_keep_tiny_values(kind):
    """The sigmoid gates are ``1 / (1 + exp(-a))`` as PyTorch's: ``1/2 + tanh(a/2)/2``
    rounded a gate of ``a`` below about -17 (float32) to exactly 0, so the states lost
    their tiny values (relative error 1) and a following ``inf`` weight made ``0 * inf =
    nan`` where PyTorch has ``inf`` (fuzz seed 700860)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(2, 3, bidirectional=True)
    with torch.no_grad():
        tm.weight_ih_l0.mul_(60.0)
        tm.weight_ih_l0_reverse.mul_(60.0)
    x = torch.tensor([[[3.0, 1e-30]], [[2.4, 1.7]], [[100.0, -0.6]]])
    nm = getattr(ng.nn, kind)(2, 3, bidirectional=True)
    copy_weights(tm, nm)
    tout = tm(x)[0]
    nout = nm(conv(x))[0]
    close(nout, tout, tol=0.0, rtol=1e-5)
    # an inf recurrent weight after the saturated step: torch's inf, not nan
    with torch.no_grad():
        tm.weight_hh_l0_reverse[-1, 1] = float("inf")
    copy_weights(tm, nm)
    tout = tm(x)[0]
    nout = nm(conv(x))[0]
    np.testing.assert_array_equal(np.isnan(nout.detach().numpy()), np.isnan(tout.detach().numpy()))
    close(nout, tout, tol=1e-6, rtol=1e-5)


def test_relu_rnn_gradient_passes_through_nan_states():
    """The ReLU RNN's backward masks as PyTorch's threshold_backward, 0 only where
    h <= 0: a NaN state (NaN > 0 is False too) passes its gradient on (fuzz seed 701403:
    numbagrad's input gradient was 0 where PyTorch's was finite)."""
    torch.manual_seed(1)
    tm = torch.nn.RNN(2, 3, nonlinearity="relu")
    with torch.no_grad():
        tm.weight_hh_l0[1, 1] = float("inf")
        tm.weight_hh_l0[0, 0] = -89.0
    nm = ng.nn.RNN(2, 3, nonlinearity="relu")
    copy_weights(tm, nm)
    x = torch.tensor([[[-0.56, -0.2]], [[0.74, 0.52]], [[-0.06, 0.28]]])
    grads = []
    for m, mod in ((ng, nm), (torch, tm)):
        xi = m.tensor(x.numpy(), requires_grad=True)
        _out, h = mod(xi)
        (g,) = m.autograd.grad(h, [xi], m.ones(h.shape))
        grads.append(g.detach().numpy())
    np.testing.assert_array_equal(np.isnan(grads[0]), np.isnan(grads[1]))
    close(grads[0], grads[1], tol=1e-6, rtol=1e-5)


def test_rnn_layer_checks_its_initial_state_shape():
    """The fused layer's kernels check nothing: an initial state of another batch size is
    a clear RuntimeError, not NumPy's matmul ValueError (fuzz seed 701833)."""
    from numbagrad.nn._rnn import rnn_layer

    xp = ng.zeros(2, 2, 4)
    with pytest.raises(RuntimeError, match=r"Expected h0 of size \[2, 1\]"):
        rnn_layer("LSTM", xp, ng.zeros(1, 1), ng.zeros(1, 1), ng.zeros(4, 1), None)
    with pytest.raises(RuntimeError, match=r"Expected c0 of size \[2, 1\]"):
        rnn_layer("LSTM", xp, ng.zeros(2, 1), ng.zeros(2, 3), ng.zeros(4, 1), None)
