"""Learning-rate schedulers against PyTorch: values per step, fractional epochs of warm
restarts, errors, ``state_dict``."""

import io
import warnings

import numpy as np
import pytest

import numbagrad
import numbagrad.nn as nn

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-12, atol=1e-12):
    a, b = _np(ours), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _raises_like(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    return str(ours.value), str(theirs.value)


# -- learning-rate schedulers ---------------------------------------------------------------------
def _lrs(lib, make, steps=16, opt="sgd", fractional=None):
    p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
    o = lib.optim.SGD([p], lr=0.1, momentum=0.9) if opt == "sgd" else lib.optim.Adam([p], lr=0.1)
    s = make(lib.optim.lr_scheduler, o)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(steps):
            o.zero_grad()
            (p**2).sum().backward()
            o.step()
            s.step() if fractional is None else s.step(i * fractional)
            g = o.param_groups[0]
            out.append((g["lr"], g.get("momentum", g.get("betas", (0,))[0])))
    return np.array(out), _np(p)


@pytest.mark.parametrize(
    "case",
    [
        ("linear", lambda S, o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6)),
        ("constant", lambda S, o: S.ConstantLR(o, factor=0.3, total_iters=4)),
        (
            "sequential",
            lambda S, o: S.SequentialLR(
                o,
                [
                    S.LinearLR(o, start_factor=0.1, total_iters=3),
                    S.ExponentialLR(o, gamma=0.8),
                    S.CosineAnnealingLR(o, T_max=5),
                ],
                milestones=[3, 8],
            ),
        ),
        ("onecycle", lambda S, o: S.OneCycleLR(o, max_lr=0.7, total_steps=17)),
        (
            "onecycle3",
            lambda S, o: S.OneCycleLR(
                o,
                max_lr=0.7,
                epochs=2,
                steps_per_epoch=9,
                three_phase=True,
                anneal_strategy="linear",
            ),
        ),
        ("restarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)),
    ],
)
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_new_lr_schedulers_match_torch(case, opt):
    _, make = case
    (lo, po), (lt, pt) = _lrs(numbagrad, make, opt=opt), _lrs(torch, make, opt=opt)
    np.testing.assert_allclose(lo, lt, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(po, pt, rtol=1e-10)


@pytest.mark.parametrize("t_mult", [1, 2])
def test_warm_restarts_fractional_epochs_match_torch(t_mult):
    def make(S, o):
        return S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=t_mult)

    lo, _ = _lrs(numbagrad, make, fractional=0.35)
    lt, _ = _lrs(torch, make, fractional=0.35)
    np.testing.assert_allclose(lo, lt, rtol=1e-12)


def test_scheduler_errors_and_state_dict():
    S = numbagrad.optim.lr_scheduler
    o = numbagrad.optim.SGD([nn.Parameter(numbagrad.ones(1))], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(o, start_factor=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(o, max_lr=1.0)
    with pytest.raises(ValueError, match="T_0"):
        S.CosineAnnealingWarmRestarts(o, T_0=0)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        S.SequentialLR(o, [S.ConstantLR(o)], milestones=[2])
    seq = S.SequentialLR(o, [S.ConstantLR(o, total_iters=2), S.ExponentialLR(o, 0.5)], [2])
    for _ in range(3):
        o.step()
        seq.step()
    buf = io.BytesIO()
    numbagrad.save(seq.state_dict(), buf)
    o2 = numbagrad.optim.SGD([nn.Parameter(numbagrad.ones(1))], lr=0.1, momentum=0.9)
    seq2 = S.SequentialLR(o2, [S.ConstantLR(o2, total_iters=2), S.ExponentialLR(o2, 0.5)], [2])
    buf.seek(0)
    seq2.load_state_dict(numbagrad.load(buf, weights_only=False))
    assert seq2.last_epoch == seq.last_epoch
    assert seq2._schedulers[1].last_epoch == seq._schedulers[1].last_epoch
