"""numbagrad.optim and numbagrad.optim.lr_scheduler against PyTorch's.

Every optimizer runs 20 steps on the same deterministic problem in numbagrad and in torch
(float64): the parameters must agree to 1e-10. The problem has three parameters of
different shapes, one above ``FUSED_MIN`` so that both the NumPy path and the fused Numba
kernels are compared; a separate test checks the two paths give the same bits.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.optim import _functional
from numbagrad.optim import lr_scheduler as ng_sched


def _torch():
    return pytest.importorskip("torch")


# -- the problem ------------------------------------------------------------------------------
_R = np.random.default_rng(1234)
_A = _R.standard_normal((8, 5))
_B = _R.standard_normal(8)
_INIT = [_R.standard_normal(5), _R.standard_normal((3, 4)), _R.standard_normal(300)]


def _loss(mod, ps):
    """Least squares in x, a bounded term in W, a quartic in c and a coupling of x and W."""
    x, w, c = ps
    dt = x.detach().numpy().dtype
    r = mod.from_numpy(_A.astype(dt)) @ x - mod.from_numpy(_B.astype(dt))
    return (
        (r * r).sum()
        + (mod.tanh(w) ** 2).sum()
        + 0.1 * ((c - 0.5) ** 4).sum()
        + 0.1 * (x.sum() * w.sum()) ** 2
    )


def _params(mod, dtype=np.float64):
    return [mod.from_numpy(a.astype(dtype)).requires_grad_(True) for a in _INIT]


def _run(mod, cls, kwargs, n=20, params=None, opt=None):
    """``n`` steps of ``cls(params, **kwargs)``; returns the parameters (NumPy copies)."""
    ps = _params(mod) if params is None else params
    if opt is None:
        opt = getattr(mod.optim, cls)(ps, **kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0  # maximize -loss: same minimum
    for _ in range(n):
        opt.zero_grad()
        (sign * _loss(mod, ps)).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in ps]


def _assert_close(a, b, tol=1e-10):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.02, "betas": (0.3, 0.8), "eps": 1e-6, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.3, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.005, "alpha": 0.3, "centered": True, "maximize": True}),
    ("RMSprop", {"lr": 0.005, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {
            "lr": 0.1,
            "lr_decay": 0.01,
            "weight_decay": 0.1,
            "initial_accumulator_value": 0.1,
            "eps": 1e-8,
            "maximize": True,
        },
    ),
]


def _case_id(case):
    cls, kw = case
    return cls + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def test_problem_exercises_both_paths():
    sizes = [a.size for a in _INIT]
    assert min(sizes) < _functional.FUSED_MIN <= max(sizes)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_matches_torch_20_steps(case):
    torch = _torch()
    cls, kw = case
    ours = _run(ng, cls, kw)
    theirs = _run(torch, cls, kw)
    _assert_close(ours, theirs)
    assert not np.allclose(ours[2], _INIT[2])  # the large parameter did move


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_fused_and_numpy_paths_same_bits(case, monkeypatch):
    cls, kw = case
    monkeypatch.setattr(_functional, "FUSED_MIN", 10**12)
    numpy_path = _run(ng, cls, kw, n=5)
    monkeypatch.setattr(_functional, "FUSED_MIN", 1)
    fused = _run(ng, cls, kw, n=5)
    for a, b in zip(numpy_path, fused):
        np.testing.assert_array_equal(a, b)


def test_float32_matches_torch():
    torch = _torch()
    out = []
    for mod in (ng, torch):
        ps = _params(mod, np.float32)
        _run(mod, "Adam", {"lr": 0.01, "amsgrad": True}, params=ps)
        out.append([p.detach().numpy().copy() for p in ps])
    assert out[0][2].dtype == np.float32
    _assert_close(out[0], out[1], tol=1e-5)


def test_nan_and_zero_eps_follow_torch():
    torch = _torch()
    res = []
    for mod in (ng, torch):
        p = mod.from_numpy(np.ones(100)).requires_grad_(True)
        opt = mod.optim.Adagrad([p], lr=0.1, eps=0.0)
        p.grad = mod.from_numpy(np.r_[np.zeros(50), np.full(49, 2.0), np.nan])
        opt.step()  # 0/0 -> nan, as PyTorch (no ZeroDivisionError from the kernel)
        res.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(res[0], res[1])


# -- in-place semantics ------------------------------------------------------------------------
def test_step_updates_in_place_and_bumps_version():
    ps = _params(ng)
    views = [p.detach().numpy() for p in ps]
    versions = [p._version for p in ps]
    ids = [id(p) for p in ps]
    opt = ng.optim.Adam(ps, lr=0.1)
    _loss(ng, ps).backward()
    opt.step()
    assert [id(p) for p in opt.param_groups[0]["params"]] == ids
    for p, v, old, init in zip(ps, views, versions, _INIT):
        assert np.shares_memory(p.detach().numpy(), v)
        assert not np.allclose(v, init)
        assert p._version > old
        assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_step_invalidates_saved_graph():
    torch = _torch()
    for mod in (ng, torch):
        w = mod.from_numpy(np.arange(100.0)).requires_grad_(True)
        opt = mod.optim.SGD([w], lr=0.1)
        y = (w * w).sum()  # saves w
        w.grad = mod.from_numpy(np.ones(100))
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


@pytest.mark.parametrize("cls", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_non_contiguous_parameter_takes_numpy_path(cls):
    kw = {"lr": 0.01, "momentum": 0.9} if cls in ("SGD", "RMSprop") else {"lr": 0.01}
    base = np.random.default_rng(5).standard_normal((10, 30))
    grad = np.cos(base)
    out = []
    for arr in (np.ascontiguousarray(base.T), base.T):  # the second one is strided
        p = ng.from_numpy(arr.copy() if arr.flags.c_contiguous else base.copy().T)
        p.requires_grad_(True)
        assert p.is_contiguous() == arr.flags.c_contiguous
        opt = getattr(ng.optim, cls)([p], **kw)
        for _ in range(3):
            p.grad = ng.from_numpy(np.ascontiguousarray(grad.T))
            opt.step()
        out.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(out[0], out[1])


def test_tensor_lr_matches_float_lr():
    out = []
    for lr in (0.01, ng.tensor(0.01, dtype=ng.float64)):
        ps = _params(ng)
        out.append(_run(ng, "Adam", {"lr": lr}, n=3, params=ps))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        ng.optim.SGD([ng.zeros(1, requires_grad=True)], lr=ng.zeros(2))


def test_parameters_without_grad_are_skipped():
    a, b = ng.ones(3, requires_grad=True), ng.ones(200, requires_grad=True)
    opt = ng.optim.Adam([a, b], lr=0.1)
    a.sum().backward()
    opt.step()
    assert b.tolist() == [1.0] * 200 and b not in opt.state
    assert a.tolist() != [1.0] * 3 and a in opt.state


def test_closure_runs_with_grad_enabled():
    w = ng.tensor([3.0], requires_grad=True)
    opt = ng.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with ng.no_grad():
        loss = opt.step(closure)
    assert float(loss) == 9.0 and w.tolist() == [1.5]


# -- groups, zero_grad, state_dict ------------------------------------------------------------
def test_param_groups_with_different_lrs_match_torch():
    torch = _torch()
    out = []
    for mod in (ng, torch):
        ps = _params(mod)
        groups = [{"params": [ps[0], ps[2]], "lr": 0.05}, {"params": [ps[1]]}]
        opt = mod.optim.SGD(groups, lr=0.01, momentum=0.9)
        assert [g["lr"] for g in opt.param_groups] == [0.05, 0.01]
        assert opt.param_groups[1]["momentum"] == 0.9
        out.append(_run(mod, "SGD", {}, params=ps, opt=opt))
    _assert_close(out[0], out[1])


def test_zero_grad():
    ps = _params(ng)
    opt = ng.optim.SGD(ps, lr=0.1)
    _loss(ng, ps).backward()
    grads = [p.grad for p in ps]
    opt.zero_grad(set_to_none=False)
    for p, g in zip(ps, grads):
        assert p.grad is g and not g.detach().numpy().any()
    opt.zero_grad()
    assert all(p.grad is None for p in ps)


STATEFUL = [
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
]


@pytest.mark.parametrize("case", STATEFUL, ids=[_case_id(c) for c in STATEFUL])
def test_state_dict_round_trip(case):
    cls, kw = case
    straight = _run(ng, cls, kw, n=20)
    ps = _params(ng)
    opt = getattr(ng.optim, cls)(ps, **kw)
    _run(ng, cls, kw, n=10, params=ps, opt=opt)
    saved = pickle.loads(pickle.dumps(opt.state_dict()))  # a checkpoint on disk
    ps2 = [ng.from_numpy(p.detach().numpy().copy()).requires_grad_(True) for p in ps]
    opt2 = getattr(ng.optim, cls)(ps2, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == kw["lr"]
    for p in ps2:  # the loaded state is a copy
        for v in opt2.state[p].values():
            if isinstance(v, ng.Tensor):
                assert not any(
                    np.shares_memory(v.numpy(), s.numpy())
                    for st in saved["state"].values()
                    for s in st.values()
                    if isinstance(s, ng.Tensor)
                )
    resumed = _run(ng, cls, kw, n=10, params=ps2, opt=opt2)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", STATEFUL, ids=[_case_id(c) for c in STATEFUL])
def test_state_dict_format_matches_torch(case):
    torch = _torch()
    cls, kw = case
    sds = []
    for mod in (ng, torch):
        ps = _params(mod)
        opt = getattr(mod.optim, cls)([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.5}], **kw)
        _run(mod, cls, kw, n=2, params=ps, opt=opt)
        sds.append(opt.state_dict())
    ours, theirs = sds
    assert [g["params"] for g in ours["param_groups"]] == [[0], [1, 2]]
    assert [g["params"] for g in theirs["param_groups"]] == [[0], [1, 2]]
    for g, tg in zip(ours["param_groups"], theirs["param_groups"]):
        assert set(g) <= set(tg)  # torch has more (foreach, fused, ...)
        assert all(g[k] == tg[k] for k in g)
    assert set(ours["state"]) == set(theirs["state"]) == {0, 1, 2}
    for i in range(3):
        assert set(ours["state"][i]) == set(theirs["state"][i])
        for k, v in ours["state"][i].items():
            np.testing.assert_allclose(
                v.numpy(), theirs["state"][i][k].numpy(), rtol=1e-10, atol=1e-12
            )


def test_load_state_dict_errors():
    a, b = ng.ones(2, requires_grad=True), ng.ones(2, requires_grad=True)
    opt = ng.optim.SGD([a, b], lr=0.1)
    other = ng.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(ng.optim.SGD([a], lr=0.1).state_dict())


def test_repr_like_torch():
    torch = _torch()
    w = ng.zeros(2, requires_grad=True)
    text = repr(ng.optim.SGD([w], lr=0.1, momentum=0.9))
    assert text == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.1\n"
        "    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
        "    weight_decay: 0\n)"
    )
    theirs = repr(torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9))
    assert all(line in theirs.splitlines() for line in text.splitlines())


def test_deepcopy_and_pickle_of_optimizer():
    w = ng.ones(100, requires_grad=True)
    opt = ng.optim.Adam([w], lr=0.1)
    w.sum().backward()
    opt.step()
    opt2 = pickle.loads(pickle.dumps(opt))
    assert opt2.param_groups[0]["lr"] == 0.1
    assert float(next(iter(opt2.state.values()))["step"]) == 1.0
    assert copy.deepcopy(opt).defaults == opt.defaults


# -- errors -----------------------------------------------------------------------------------
def test_construction_errors_match_torch():
    torch = _torch()
    cases = [
        ("SGD", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("SGD", {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
        ("SGD", {"lr": 0.1, "weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
        (
            "SGD",
            {"lr": 0.1, "nesterov": True},
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        ("Adam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
        ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
        ("Adam", {"eps": -1e-8}, "Invalid epsilon value: -1e-08"),
        ("AdamW", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("RMSprop", {"alpha": -0.5}, "Invalid alpha value: -0.5"),
        ("RMSprop", {"momentum": -1.0}, "Invalid momentum value: -1.0"),
        ("Adagrad", {"lr_decay": -1.0}, "Invalid lr_decay value: -1.0"),
        (
            "Adagrad",
            {"initial_accumulator_value": -1.0},
            "Invalid initial_accumulator_value value: -1.0",
        ),
    ]
    for cls, kw, msg in cases:
        for mod in (ng, torch):
            w = mod.zeros(2, requires_grad=True)
            with pytest.raises(ValueError) as info:
                getattr(mod.optim, cls)([w], **kw)
            assert str(info.value) == msg, (mod.__name__, cls, kw)


def test_parameter_errors_match_torch():
    torch = _torch()
    for mod in (ng, torch):
        w = mod.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            mod.optim.SGD([w * 2], lr=0.1)
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            mod.optim.SGD([], lr=0.1)
        with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
            mod.optim.SGD(w, lr=0.1)
        with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
            mod.optim.SGD([w, 3.0], lr=0.1)
        with pytest.raises(TypeError, match="ordered collections"):
            mod.optim.SGD([{"params": {w}}], lr=0.1)
        with pytest.raises(ValueError, match="more than one parameter group"):
            mod.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            mod.optim.SGD([w, w], lr=0.1)
        with pytest.raises(ValueError, match="per-parameter options"):
            mod.optim.LBFGS([{"params": [w]}, {"params": [mod.ones(1, requires_grad=True)]}])


def test_bad_gradient_is_reported_before_any_kernel():
    w = ng.ones(100, requires_grad=True)
    opt = ng.optim.Adam([w], lr=0.1)
    w.sum().backward()
    opt.step()
    opt.state[w]["exp_avg"] = ng.zeros(10)  # e.g. a state_dict of another model
    with pytest.raises(RuntimeError, match="does not match its parameter"):
        opt.step()


def test_lbfgs_needs_closure_and_known_line_search():
    w = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="needs a closure"):
        ng.optim.LBFGS([w]).step(None)
    opt = ng.optim.LBFGS([w], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# -- LBFGS ------------------------------------------------------------------------------------
def _rosen_loss(mod, ps):
    x, w, c = ps
    r = mod.from_numpy(_A) @ x - mod.from_numpy(_B)
    rosen = ((1 - c[:-1]) ** 2 + 10 * (c[1:] - c[:-1] ** 2) ** 2).sum()
    return (r * r).sum() + (mod.tanh(w) ** 2).sum() + rosen + (x.sum() * w.sum()) ** 2


def _lbfgs_params(mod):
    """x, W and the first 100 entries of c, halved (Rosenbrock-scaled)."""
    return [mod.from_numpy(0.5 * a[:100]).requires_grad_(True) for a in _INIT]


def _run_lbfgs(mod, kw, steps, params=None, opt=None):
    ps = params if params is not None else _lbfgs_params(mod)
    opt = opt or mod.optim.LBFGS(ps, **kw)

    def closure():
        opt.zero_grad()
        loss = _rosen_loss(mod, ps)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return [p.detach().numpy().copy() for p in ps], losses, opt


LBFGS_CASES = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 10},
    {"lr": 0.5, "history_size": 5, "max_iter": 15},
]


@pytest.mark.parametrize("kw", LBFGS_CASES, ids=[str(k) for k in LBFGS_CASES])
def test_lbfgs_matches_torch(kw):
    torch = _torch()
    ours, our_losses, opt = _run_lbfgs(ng, kw, 2)
    theirs, their_losses, topt = _run_lbfgs(torch, kw, 2)
    _assert_close(ours, theirs)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-12)
    state, tstate = opt.state[opt._params[0]], topt.state[topt._params[0]]
    assert state["func_evals"] == tstate["func_evals"]
    assert state["n_iter"] == tstate["n_iter"]
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])
    assert our_losses[1] < our_losses[0]


def test_lbfgs_converges_on_rosenbrock():
    x = ng.tensor([-1.2, 1.0], dtype=ng.float64, requires_grad=True)
    opt = ng.optim.LBFGS(
        [x],
        line_search_fn="strong_wolfe",
        max_iter=200,
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
    )

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-8)


def test_lbfgs_state_dict_round_trip():
    kw = {"line_search_fn": "strong_wolfe", "max_iter": 4, "history_size": 3}
    straight, _, _ = _run_lbfgs(ng, kw, 4)
    ps = _lbfgs_params(ng)
    _, _, opt = _run_lbfgs(ng, kw, 2, params=ps)
    saved = copy.deepcopy(opt.state_dict())
    ps2 = [ng.from_numpy(p.detach().numpy().copy()).requires_grad_(True) for p in ps]
    opt2 = ng.optim.LBFGS(ps2, **kw)
    opt2.load_state_dict(saved)
    resumed, _, _ = _run_lbfgs(ng, kw, 2, params=ps2, opt=opt2)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a, b)


# -- schedulers -------------------------------------------------------------------------------
def _sched_lrs(mod, make, epochs=30, metrics=None):
    ps = [mod.zeros(2, requires_grad=True), mod.zeros(3, requires_grad=True)]
    opt = mod.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0, momentum=0.9)
    sched = make(mod.optim.lr_scheduler, opt)
    out = [list(sched.get_last_lr())]
    for epoch in range(epochs):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[epoch])
        out.append(list(sched.get_last_lr()))
        assert out[-1] == [g["lr"] for g in opt.param_groups]
    return out, sched


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, [lambda e: 0.95**e, lambda e: e % 3 + 1]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_sequence_matches_torch(name):
    torch = _torch()
    ours, _ = _sched_lrs(ng, SCHEDULERS[name])
    theirs, _ = _sched_lrs(torch, SCHEDULERS[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    assert len({tuple(x) for x in ours}) > 1


PLATEAU = [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2, "threshold": 0.1, "threshold_mode": "abs"},
    {"patience": 1, "cooldown": 2, "min_lr": [0.2, 0.01], "factor": 0.5},
    {"patience": 0, "factor": 0.5, "min_lr": 0.1, "eps": 1e-3},
]


@pytest.mark.parametrize("kw", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_on_plateau_matches_torch(kw):
    torch = _torch()
    metrics = [1.0 / (1 + e) if e < 8 else 0.2 + 0.01 * np.sin(e) for e in range(30)]
    ours, sched = _sched_lrs(ng, lambda m, o: m.ReduceLROnPlateau(o, **kw), metrics=metrics)
    theirs, tsched = _sched_lrs(torch, lambda m, o: m.ReduceLROnPlateau(o, **kw), metrics=metrics)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    assert ours[-1] != ours[0]
    assert (sched.best, sched.num_bad_epochs, sched.last_epoch) == (
        tsched.best,
        tsched.num_bad_epochs,
        tsched.last_epoch,
    )


def test_scheduler_state_dict_resume():
    make = SCHEDULERS["CosineAnnealingLR"]
    full, _ = _sched_lrs(ng, make, epochs=20)
    ps = [ng.zeros(2, requires_grad=True), ng.zeros(3, requires_grad=True)]
    opt = ng.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0)
    sched = make(ng_sched, opt)
    for _ in range(10):
        opt.step()
        sched.step()
    saved_opt, saved_sched = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    assert saved_sched["last_epoch"] == 10 and "optimizer" not in saved_sched
    opt2 = ng.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0)
    sched2 = make(ng_sched, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    rest = []
    for _ in range(10):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    np.testing.assert_allclose(rest, full[11:], rtol=1e-15)


def test_scheduler_closed_form_and_warnings():
    torch = _torch()
    for mod in (ng, torch):
        opt = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        sched = mod.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(7)
        assert sched.get_last_lr() == [0.25]
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ng_sched.StepLR(object(), 3)
    opt = ng.optim.SGD([ng.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match=r"Factor should be < 1\.0\."):
        ng_sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        ng_sched.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(KeyError, match="initial_lr"):
        ng_sched.StepLR(opt, 3, last_epoch=4)


def test_scheduler_drives_optimizer_steps():
    w = ng.tensor([1.0], requires_grad=True)
    opt = ng.optim.SGD([w], lr=1.0)
    sched = ng_sched.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        opt.zero_grad()
        w.sum().backward()  # gradient 1
        opt.step()
        sched.step()
    assert w.tolist() == [1.0 - 1.0 - 0.5 - 0.25]


def test_no_warning_from_plain_training_loop():
    w = ng.ones(100, requires_grad=True)
    opt = ng.optim.AdamW([w], lr=0.01)
    sched = ng_sched.ExponentialLR(opt, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
            sched.step()
