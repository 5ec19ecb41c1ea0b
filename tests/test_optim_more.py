"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop against PyTorch's.

Each optimizer runs on two problems in numbagrad and in torch (float64): the smooth loss of
``tests/test_optim.py``'s kind (three parameters of different shapes, one above
``FUSED_MIN`` so that the NumPy path and the fused kernels are both compared), and a fixed
sequence of random gradients assigned to ``.grad`` directly, with zeros and sign changes
(what Rprop's step-size rule branches on). Parameters and every state tensor must agree to
1e-10; the state_dicts must load across the two libraries and continue identically.
"""

import copy
import pickle

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.optim import _functional


def _torch():
    return pytest.importorskip("torch")


# -- the problems -----------------------------------------------------------------------------
_R = np.random.default_rng(2024)
_A = _R.standard_normal((8, 5))
_B = _R.standard_normal(8)
_INIT = [_R.standard_normal(5), _R.standard_normal((3, 4)), _R.standard_normal(300)]
# gradients with exact zeros and frequent sign flips, one sequence per step and parameter
_GRADS = [
    [_R.choice([-1.0, 0.0, 1.0, 1.0], size=a.shape) * _R.uniform(0.1, 2.0, a.shape) for a in _INIT]
    for _ in range(20)
]


def _loss(mod, ps):
    x, w, c = ps
    dt = x.detach().numpy().dtype
    r = mod.from_numpy(_A.astype(dt)) @ x - mod.from_numpy(_B.astype(dt))
    return (
        (r * r).sum()
        + (mod.tanh(w) ** 2).sum()
        + 0.1 * ((c - 0.5) ** 4).sum()
        + 0.1 * (x.sum() * w.sum()) ** 2
    )


def _params(mod, dtype=np.float64, init=_INIT):
    return [mod.from_numpy(np.array(a, dtype=dtype)).requires_grad_(True) for a in init]


def _steps(mod, opt, ps, kw, n, start=0, fixed=False):
    sign = -1.0 if kw.get("maximize") else 1.0  # maximize -loss: same minimum
    for i in range(start, start + n):
        opt.zero_grad()
        if fixed:
            for p, g in zip(ps, _GRADS[i]):
                p.grad = mod.from_numpy(g.astype(p.detach().numpy().dtype))
        else:
            (sign * _loss(mod, ps)).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in ps]


def _run(mod, cls, kw, n=20, fixed=False, dtype=np.float64, groups=False):
    ps = _params(mod, dtype)
    args = (
        [{"params": ps[:1]}, {"params": ps[1:], "lr": kw.get("lr", 0.01) * 0.5}] if groups else ps
    )
    opt = getattr(mod.optim, cls)(args, **kw)
    return _steps(mod, opt, ps, kw, n, fixed=fixed), opt


def _assert_close(a, b, tol=1e-10):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def _state_arrays(opt):
    return {
        (i, k): v.detach().numpy().copy()
        for i, st in opt.state_dict()["state"].items()
        for k, v in st.items()
    }


CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 2.0, "rho": 0.95, "maximize": True}),
    ("Adamax", {"lr": 0.01}),
    ("Adamax", {"lr": 0.02, "betas": (0.3, 0.8), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "maximize": True, "weight_decay": 0.05}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.02, "betas": (0.3, 0.8), "eps": 1e-6, "maximize": True}),
    ("RAdam", {"lr": 0.01}),  # rho_t > 5 from step 6: both branches
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.5)}),  # rho_inf = 3: never rectified
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.3, "decoupled_weight_decay": True, "maximize": True}),
    ("ASGD", {"lr": 0.01}),
    ("ASGD", {"lr": 0.02, "lambd": 0.01, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.01, "t0": 0.0, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.02, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05)}),
    ("Rprop", {"lr": 0.01, "maximize": True, "step_sizes": (0.005, 1.0)}),
]


def _case_id(case):
    cls, kw = case
    return cls + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


IDS = [_case_id(c) for c in CASES]


def test_problem_exercises_both_paths():
    sizes = [a.size for a in _INIT]
    assert min(sizes) < _functional.FUSED_MIN <= max(sizes)
    flat = np.concatenate([g.ravel() for step in _GRADS for g in step])
    assert (flat == 0).any() and (flat > 0).any() and (flat < 0).any()


@pytest.mark.parametrize("fixed", [False, True], ids=["loss", "fixed-grads"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch_20_steps(case, fixed):
    torch = _torch()
    cls, kw = case
    ours, opt = _run(ng, cls, kw, fixed=fixed)
    theirs, topt = _run(torch, cls, kw, fixed=fixed)
    _assert_close(ours, theirs)
    assert not np.allclose(ours[2], _INIT[2])  # the large parameter did move
    mine, other = _state_arrays(opt), _state_arrays(topt)
    assert mine.keys() == other.keys()
    for k in mine:
        np.testing.assert_allclose(mine[k], other[k], rtol=1e-10, atol=1e-12, err_msg=str(k))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_param_groups_with_different_lrs_match_torch(case):
    torch = _torch()
    cls, kw = case
    ours, opt = _run(ng, cls, kw, n=8, groups=True)
    theirs, topt = _run(torch, cls, kw, n=8, groups=True)
    _assert_close(ours, theirs)
    sd, tsd = opt.state_dict(), topt.state_dict()
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        # torch has more keys (foreach, capturable, differentiable): the implementation
        # options numbagrad does not take
        assert set(tg) - set(g) <= {"foreach", "capturable", "differentiable"}
        assert set(g) <= set(tg)
        assert all(g[k] == tg[k] for k in g)
    assert [list(s) for s in sd["state"].values()] == [list(s) for s in tsd["state"].values()]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fused_and_numpy_paths_same_bits(case, monkeypatch):
    cls, kw = case
    out = []
    for fused_min in (10**12, 1):
        monkeypatch.setattr(_functional, "FUSED_MIN", fused_min)
        res = []
        for fixed in (False, True):
            ps, opt = _run(ng, cls, kw, n=6, fixed=fixed)
            res.append((ps, _state_arrays(opt)))
        out.append(res)
    for (a, sa), (b, sb) in zip(*out):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        for k in sa:
            np.testing.assert_array_equal(sa[k], sb[k], err_msg=str(k))


def _convert(value, to):
    """A state_dict with its tensors copied into library ``to``."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return to.from_numpy(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _convert(v, to) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v, to) for v in value]
    return value


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_moves_between_torch_and_numbagrad(case):
    torch = _torch()
    cls, kw = case
    straight, _ = _run(torch, cls, kw, n=20, fixed=True)
    for first, second in ((torch, ng), (ng, torch)):
        ps = _params(first)
        opt = getattr(first.optim, cls)(ps, **kw)
        _steps(first, opt, ps, kw, 10, fixed=True)
        ps2 = _params(second, init=[p.detach().numpy() for p in ps])
        opt2 = getattr(second.optim, cls)(ps2, lr=123.0)
        opt2.load_state_dict(_convert(opt.state_dict(), second))
        assert opt2.param_groups[0]["lr"] == kw.get("lr", opt.defaults["lr"])
        resumed = _steps(second, opt2, ps2, kw, 10, start=10, fixed=True)
        _assert_close(resumed, straight)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_round_trip(case):
    cls, kw = case
    straight, _ = _run(ng, cls, kw, n=20)
    ps = _params(ng)
    opt = getattr(ng.optim, cls)(ps, **kw)
    _steps(ng, opt, ps, kw, 10)
    saved = pickle.loads(pickle.dumps(opt.state_dict()))  # a checkpoint on disk
    ps2 = [ng.from_numpy(p.detach().numpy().copy()).requires_grad_(True) for p in ps]
    opt2 = getattr(ng.optim, cls)(ps2, lr=123.0)
    opt2.load_state_dict(saved)
    resumed = _steps(ng, opt2, ps2, kw, 10)
    if cls == "NAdam":
        # load_state_dict casts mu_product (a float32 scalar under the default dtype) to
        # the parameter's float64, as PyTorch does, so the resumed products round less
        _assert_close(straight, resumed, tol=1e-12)
    else:
        for a, b in zip(straight, resumed):
            np.testing.assert_array_equal(a, b)
    opt3 = copy.deepcopy(opt2)
    assert opt3.state_dict()["param_groups"] == opt2.state_dict()["param_groups"]


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_float32_matches_torch(cls):
    torch = _torch()
    kw = {"lr": 0.01} if cls != "Adadelta" else {}
    out = []
    for mod in (ng, torch):
        ps, opt = _run(mod, cls, kw, n=10, dtype=np.float32)
        out.append((ps, opt))
    (ours, opt), (theirs, topt) = out
    assert ours[2].dtype == np.float32
    _assert_close(ours, theirs, tol=1e-5)
    for st, tst in zip(opt.state_dict()["state"].values(), topt.state_dict()["state"].values()):
        for k, v in st.items():  # the step, mu_product, eta, mu scalars keep torch's dtype
            assert v.numpy().dtype == tst[k].numpy().dtype, k


def test_rprop_nan_and_infinite_gradients_follow_torch():
    torch = _torch()
    g1 = np.r_[np.ones(40), -np.ones(30), np.zeros(30)]
    g2 = np.r_[np.full(10, np.nan), np.full(10, np.inf), -np.ones(20), np.ones(60)]
    g2[[75, 76]] = [-np.inf, np.nan]
    for fused_min in (10**12, 1):
        res = []
        for mod in (ng, torch):
            p = mod.from_numpy(np.linspace(-1, 1, 100)).requires_grad_(True)
            opt = mod.optim.Rprop([p], lr=0.1, step_sizes=(0.01, np.inf))
            for g in (g1, g2, g1):
                p.grad = mod.from_numpy(g.copy())
                if mod is ng:
                    _functional.FUSED_MIN, saved = fused_min, _functional.FUSED_MIN
                    try:
                        opt.step()
                    finally:
                        _functional.FUSED_MIN = saved
                else:
                    opt.step()
            st = opt.state[p]
            res.append([p.detach().numpy().copy(), st["prev"].numpy(), st["step_size"].numpy()])
        for a, b in zip(*res):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD"])
def test_nan_gradient_follows_torch(cls):
    torch = _torch()
    res = []
    for mod in (ng, torch):
        p = mod.from_numpy(np.ones(100)).requires_grad_(True)
        opt = getattr(mod.optim, cls)([p], lr=0.1)
        p.grad = mod.from_numpy(np.r_[np.zeros(50), np.full(49, 2.0), np.nan])
        opt.step()
        opt.step()
        res.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(res[0], res[1])


# -- options and errors -----------------------------------------------------------------------
def test_constructor_signatures_and_defaults_match_torch():
    import inspect

    torch = _torch()
    implementation_only = {"foreach", "capturable", "differentiable"}
    for cls in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        ours = inspect.signature(getattr(ng.optim, cls)).parameters
        theirs = inspect.signature(getattr(torch.optim, cls)).parameters
        expected = {k: v.default for k, v in theirs.items() if k not in implementation_only}
        assert {k: v.default for k, v in ours.items()} == expected, cls
        w = ng.zeros(2, requires_grad=True)
        tw = torch.zeros(2, requires_grad=True)
        defaults = getattr(ng.optim, cls)([w]).defaults
        tdefaults = getattr(torch.optim, cls)([tw]).defaults
        assert set(tdefaults) - set(defaults) == implementation_only
        assert all(defaults[k] == tdefaults[k] for k in defaults), cls


@pytest.mark.parametrize("cls", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
@pytest.mark.parametrize("option", ["foreach", "capturable", "differentiable", "fused"])
def test_implementation_options_are_not_accepted(cls, option):
    # as for numbagrad's other optimizers (docs/optim.rst, "Differences from PyTorch")
    w = ng.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match=option):
        getattr(ng.optim, cls)([w], **{option: False})


def test_asgd_maximize_is_keyword_only():
    # PyTorch's ASGD takes foreach (then maximize) positionally after weight_decay; that
    # position is refused here rather than read as another option
    w = ng.zeros(2, requires_grad=True)
    with pytest.raises(TypeError):
        ng.optim.ASGD([w], 0.01, 1e-4, 0.75, 1e6, 0, None)


def test_construction_errors_match_torch():
    torch = _torch()
    cases = [
        ("Adadelta", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
        ("Adadelta", {"rho": -0.1}, "Invalid rho value: -0.1"),
        ("Adadelta", {"eps": -1e-6}, "Invalid epsilon value: -1e-06"),
        ("Adadelta", {"weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
        ("Adamax", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("Adamax", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
        ("Adamax", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
        ("Adamax", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
        ("NAdam", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("NAdam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("NAdam", {"betas": (-0.1, 0.9)}, "Invalid beta parameter at index 0: -0.1"),
        ("NAdam", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
        ("NAdam", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
        ("NAdam", {"momentum_decay": -0.5}, "Invalid momentum_decay value: -0.5"),
        ("RAdam", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("RAdam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("RAdam", {"betas": (1.5, 0.9)}, "Invalid beta parameter at index 0: 1.5"),
        ("RAdam", {"betas": (0.9, 1.5)}, "Invalid beta parameter at index 1: 1.5"),
        ("RAdam", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
        ("ASGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("ASGD", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
        ("Rprop", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("Rprop", {"etas": (0.0, 1.2)}, "Invalid eta values: 0.0, 1.2"),
        ("Rprop", {"etas": (0.5, 1.0)}, "Invalid eta values: 0.5, 1.0"),
        ("Rprop", {"etas": (1.0, 1.2)}, "Invalid eta values: 1.0, 1.2"),
    ]
    for cls, kw, msg in cases:
        for mod in (ng, torch):
            w = mod.zeros(2, requires_grad=True)
            with pytest.raises(ValueError) as info:
                getattr(mod.optim, cls)([w], **kw)
            assert str(info.value) == msg, (mod.__name__, cls, kw)
    for mod in (ng, torch):
        w = mod.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            mod.optim.NAdam([w], lr=mod.ones(2))


def test_tensor_lr_matches_float_lr():
    for cls in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        a, _ = _run(ng, cls, {"lr": 0.01}, n=5)
        b, _ = _run(ng, cls, {"lr": ng.tensor(0.01, dtype=ng.float64)}, n=5)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_step_updates_in_place_and_skips_missing_grads():
    for cls in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        w = ng.ones(100, requires_grad=True)
        u = ng.ones(3, requires_grad=True)
        view = w.detach().numpy()
        opt = getattr(ng.optim, cls)([w, u], lr=0.1)
        (w * w).sum().backward()
        v0 = w._version
        opt.step()
        assert w._version == v0 + 1
        assert view[0] != 1.0  # the same memory was written
        assert u not in opt.state and u.tolist() == [1.0, 1.0, 1.0]


# -- schedulers -------------------------------------------------------------------------------
def _sched_lrs(mod, make, epochs=40, opt_cls="SGD"):
    ps = [mod.zeros(2, requires_grad=True), mod.zeros(3, requires_grad=True)]
    groups = [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}]
    if opt_cls == "SGD":
        opt = mod.optim.SGD(groups, lr=1.0, momentum=0.9)
    else:
        opt = getattr(mod.optim, opt_cls)(groups, lr=1.0)
    sched = make(mod.optim.lr_scheduler, opt)
    out = [list(sched.get_last_lr())]
    moms = []
    for _ in range(epochs):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
        assert out[-1] == [g["lr"] for g in opt.param_groups]
        moms.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return out, moms, sched, opt


class _Halve:
    """A callable object (its state is saved by the schedulers' state_dict)."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, x):
        return self.factor ** (x % 3)


SCHEDULERS = {
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05),
    "MultiplicativeLR-list": lambda m, o: m.MultiplicativeLR(o, [lambda e: 0.95, lambda e: 0.8]),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o),
    "PolynomialLR-p2": lambda m, o: m.PolynomialLR(o, total_iters=17, power=2.0),
    "PolynomialLR-p0.5": lambda m, o: m.PolynomialLR(o, total_iters=30, power=0.5),
    "CyclicLR": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "CyclicLR-tri2": lambda m, o: m.CyclicLR(
        o, [0.01, 0.02], [0.1, 0.5], step_size_up=3, step_size_down=5, mode="triangular2"
    ),
    "CyclicLR-exp": lambda m, o: m.CyclicLR(
        o,
        0.01,
        0.1,
        step_size_up=5,
        mode="exp_range",
        gamma=0.97,
        base_momentum=[0.7, 0.6],
        max_momentum=0.95,
    ),
    "CyclicLR-fn": lambda m, o: m.CyclicLR(
        o,
        0.01,
        0.1,
        step_size_up=2,
        scale_fn=lambda x: 1 / (1 + x),
        scale_mode="iterations",
        cycle_momentum=False,
    ),
    "CyclicLR-obj": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=_Halve()),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.1, total_iters=4), m.ExponentialLR(o, gamma=0.9)]
    ),
    "ChainedScheduler-3": lambda m, o: m.ChainedScheduler(
        [
            m.LinearLR(o, start_factor=0.2, total_iters=5),
            m.MultiplicativeLR(o, lambda e: 0.97),
            m.PolynomialLR(o, total_iters=30, power=1.5),
        ],
        optimizer=o,
    ),
    "SequentialLR-new": lambda m, o: m.SequentialLR(
        o,
        [
            m.LinearLR(o, start_factor=0.1, total_iters=5),
            m.PolynomialLR(o, total_iters=10, power=2.0),
            m.MultiplicativeLR(o, lambda e: 0.9),
        ],
        milestones=[5, 12],
    ),
    "SequentialLR-chained": lambda m, o: m.SequentialLR(
        o,
        [
            m.ChainedScheduler(
                [m.ExponentialLR(o, gamma=0.9), m.CosineAnnealingLR(o, T_max=6, eta_min=0.01)]
            ),
            m.ConstantLR(o, factor=0.5, total_iters=3),
            m.StepLR(o, step_size=3, gamma=0.7),
        ],
        milestones=[9, 15],
    ),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_sequence_matches_torch(name):
    torch = _torch()
    ours, moms, _, _ = _sched_lrs(ng, SCHEDULERS[name])
    theirs, tmoms, _, _ = _sched_lrs(torch, SCHEDULERS[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(moms, tmoms, rtol=1e-13, atol=1e-15)
    assert len({tuple(x) for x in ours}) > 3


@pytest.mark.parametrize("opt_cls", ["Adam", "NAdam", "RAdam", "Adamax"])
def test_cyclic_lr_cycles_beta1_like_torch(opt_cls):
    torch = _torch()

    def make(m, o):
        return m.CyclicLR(o, 0.01, 0.1, step_size_up=3, base_momentum=0.5, max_momentum=0.9)

    ours, moms, _, _ = _sched_lrs(ng, make, epochs=12, opt_cls=opt_cls)
    theirs, tmoms, _, _ = _sched_lrs(torch, make, epochs=12, opt_cls=opt_cls)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    np.testing.assert_allclose(moms, tmoms, rtol=1e-13)
    assert len({m[0][0] for m in moms}) > 2


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_state_dict_resume(name):
    make = SCHEDULERS[name]
    full, _, _, _ = _sched_lrs(ng, make, epochs=30)
    _, _, sched, opt = _sched_lrs(ng, make, epochs=12)
    saved_opt = copy.deepcopy(opt.state_dict())
    saved_sched = pickle.loads(pickle.dumps(sched.state_dict()))
    assert "optimizer" not in saved_sched
    ps = [ng.zeros(2, requires_grad=True), ng.zeros(3, requires_grad=True)]
    opt2 = ng.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0, momentum=0.9)
    sched2 = make(ng.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    rest = []
    for _ in range(18):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    np.testing.assert_allclose(rest, full[13:], rtol=1e-15)


def test_scheduler_state_dict_matches_torch_keys():
    torch = _torch()
    for name in ["MultiplicativeLR", "PolynomialLR-p2", "CyclicLR-exp", "CyclicLR-obj"]:
        _, _, sched, _ = _sched_lrs(ng, SCHEDULERS[name], epochs=5)
        _, _, tsched, _ = _sched_lrs(torch, SCHEDULERS[name], epochs=5)
        sd, tsd = sched.state_dict(), tsched.state_dict()
        assert set(sd) == set(tsd), name
        for k in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
            assert sd[k] == pytest.approx(tsd[k], rel=1e-13), (name, k)
    _, _, sched, _ = _sched_lrs(ng, SCHEDULERS["CyclicLR-obj"], epochs=2)
    assert sched.state_dict()["_scale_fn_custom"] == {"factor": 0.5}
    _, _, sched, _ = _sched_lrs(ng, SCHEDULERS["CyclicLR-fn"], epochs=2)
    assert sched.state_dict()["_scale_fn_custom"] is None  # a plain function is not saved


def test_polynomial_closed_form_and_warnings_match_torch():
    torch = _torch()
    res = []
    for mod in (ng, torch):
        opt = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        sched = mod.optim.lr_scheduler.PolynomialLR(opt, total_iters=8, power=3.0)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(5)
        res.append(sched.get_last_lr())
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()
    assert res[0] == pytest.approx(res[1], rel=1e-15)


def test_sequential_restart_of_a_chain_raises_as_in_torch():
    # SequentialLR restarts a scheduler at its milestone from its closed form (or get_lr);
    # a ChainedScheduler has neither, in PyTorch as here
    torch = _torch()
    for mod in (ng, torch):
        S = mod.optim.lr_scheduler
        opt = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        chain = S.ChainedScheduler([S.ExponentialLR(opt, gamma=0.9)])
        sched = S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, 2), chain], milestones=[2])
        opt.step()
        sched.step()
        with pytest.raises(NotImplementedError):
            sched.step()


def test_sequential_restart_does_not_warn():
    # PyTorch 2.13 restarts the scheduler at a milestone with _update_lr(0), not step(0)
    import warnings

    opt = ng.optim.SGD([ng.zeros(1, requires_grad=True)], lr=1.0)
    S = ng.optim.lr_scheduler
    sched = S.SequentialLR(
        opt, [S.ConstantLR(opt, 0.5, 2), S.ExponentialLR(opt, 0.9)], milestones=[2]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            opt.step()
            sched.step()


def _check_scheduler_errors(mod):
    if True:
        S = mod.optim.lr_scheduler
        opt = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        adagrad = mod.optim.Adagrad([mod.zeros(1, requires_grad=True)], lr=1.0)
        other = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        checks = [
            (ValueError, "Expected 1 lr_lambdas, but got 2",
             lambda: S.MultiplicativeLR(opt, [lambda e: 1, lambda e: 1])),
            (TypeError, "lr_lambda should be a function, but got float",
             lambda: S.MultiplicativeLR(opt, 0.5)),
            (ValueError, "mode is invalid and scale_fn is None",
             lambda: S.CyclicLR(opt, 0.1, 1.0, mode="sine")),
            (ValueError, "optimizer must support momentum or beta1",
             lambda: S.CyclicLR(adagrad, 0.1, 1.0)),
            (ValueError, "max_lr must have the same length as optimizer.param_groups",
             lambda: S.CyclicLR(opt, 0.1, [1.0, 2.0])),
            (TypeError, "is not an Optimizer", lambda: S.CyclicLR(object(), 0.1, 1.0)),
            (ValueError, "expects at least one scheduler to be chained",
             lambda: S.ChainedScheduler([])),
            (ValueError, "does not support `ReduceLROnPlateau`",
             lambda: S.ChainedScheduler([S.ReduceLROnPlateau(opt)])),
            (ValueError, "expects all schedulers to belong to the same optimizer",
             lambda: S.ChainedScheduler([S.StepLR(opt, 2), S.StepLR(other, 2)])),
            (TypeError, "should have `optimizer` as its attribute",
             lambda: S.ChainedScheduler([object()], optimizer=opt)),
        ]  # fmt: skip
        for exc, msg, fn in checks:
            with pytest.raises(exc, match=msg):
                fn()
        assert issubclass(S._LRScheduler, S.LRScheduler)
        with pytest.raises(TypeError):
            S.StepLR(opt, 2, verbose=True)  # removed in PyTorch 2.13


def test_new_scheduler_errors_match_torch():
    torch = _torch()
    for mod in (ng, torch):
        _check_scheduler_errors(mod)


# -- swa_utils --------------------------------------------------------------------------------
def _swa_run(mod, make, n=6):
    """Train a small model with SGD and fold it into ``make(model)`` after each step; the
    averaged parameters and buffers (NumPy copies)."""
    gen = np.random.default_rng(7)

    class Net(mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mod.nn.Linear(3, 2, dtype=mod.float64)
            self.register_buffer("count", mod.zeros(2, dtype=mod.float64))

        def forward(self, x):
            return self.lin(x)

    net = Net()
    with mod.no_grad():
        net.lin.weight.copy_(mod.from_numpy(gen.standard_normal((2, 3))))
        net.lin.bias.copy_(mod.from_numpy(gen.standard_normal(2)))
    avg = make(mod.optim.swa_utils, net)
    opt = mod.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(n):
        opt.zero_grad()
        net(mod.from_numpy(gen.standard_normal((4, 3)))).pow(2).sum().backward()
        opt.step()
        with mod.no_grad():
            net.count.add_(1.5)
        avg.update_parameters(net)
    out = [p.detach().numpy().copy() for p in avg.module.parameters()]
    out += [b.detach().numpy().copy() for b in avg.module.buffers()]
    return out, int(avg.n_averaged)


AVERAGERS = {
    "swa": lambda S, m: S.AveragedModel(m),
    "swa-buffers": lambda S, m: S.AveragedModel(m, use_buffers=True),
    "ema-multi": lambda S, m: S.AveragedModel(m, multi_avg_fn=S.get_ema_multi_avg_fn(0.9)),
    "swa-multi": lambda S, m: S.AveragedModel(m, multi_avg_fn=S.get_swa_multi_avg_fn()),
    "ema": lambda S, m: S.AveragedModel(m, avg_fn=S.get_ema_avg_fn(0.7), use_buffers=True),
    "swa-fn": lambda S, m: S.AveragedModel(m, avg_fn=S.get_swa_avg_fn()),
}


@pytest.mark.parametrize("name", list(AVERAGERS))
def test_averaged_model_matches_torch(name):
    torch = _torch()
    ours, n = _swa_run(ng, AVERAGERS[name])
    theirs, tn = _swa_run(torch, AVERAGERS[name])
    assert n == tn == 6
    _assert_close(ours, theirs, tol=1e-14)


def test_averaged_model_is_the_mean_and_forwards():
    torch_free = []
    model = ng.nn.Linear(2, 1, bias=False)
    swa = ng.optim.swa_utils.AveragedModel(model)
    for v in (1.0, 2.0, 3.0, 10.0):
        with ng.no_grad():
            model.weight.fill_(v)
        swa.update_parameters(model)
        torch_free.append(v)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.mean(torch_free))
    assert swa(ng.ones(1, 2)).tolist() == [[8.0]]
    assert swa.module is not model and model.weight.tolist() == [[10.0, 10.0]]
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        ng.optim.swa_utils.AveragedModel(
            model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None
        )


def test_swa_errors_match_torch():
    torch = _torch()
    for mod in (ng, torch):
        S = mod.optim.swa_utils
        opt = mod.optim.SGD([mod.zeros(1, requires_grad=True)], lr=1.0)
        for bad in (-0.1, 1.5):
            with pytest.raises(ValueError, match="Invalid decay value"):
                S.get_ema_avg_fn(bad)
            with pytest.raises(ValueError, match="Invalid decay value"):
                S.get_ema_multi_avg_fn(bad)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
            S.SWALR(opt, 0.1, anneal_strategy="step")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            S.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            S.SWALR(opt, 0.1, anneal_epochs=2.5)


SWALRS = {
    "cos": lambda m, o: m.SWALR(o, swa_lr=0.05),
    "linear-list": lambda m, o: m.SWALR(
        o, swa_lr=[0.05, 0.5], anneal_epochs=7, anneal_strategy="linear"
    ),
    "zero-epochs": lambda m, o: m.SWALR(o, swa_lr=0.2, anneal_epochs=0),
    "after-cosine": lambda m, o: m.SWALR(o, swa_lr=0.01, anneal_epochs=4),
}


@pytest.mark.parametrize("name", list(SWALRS))
def test_swalr_matches_torch(name):
    torch = _torch()

    res = []
    for mod in (ng, torch):
        ps = [mod.zeros(2, requires_grad=True), mod.zeros(3, requires_grad=True)]
        opt = mod.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0)
        sched = SWALRS[name](mod.optim.swa_utils, opt)
        out = [list(sched.get_last_lr())]
        for i in range(15):
            opt.step()
            sched.step()
            out.append(list(sched.get_last_lr()))
            if i == 6:  # a checkpoint in the middle: resume from it in a fresh scheduler
                state = pickle.loads(pickle.dumps(sched.state_dict()))
                assert "anneal_func" not in state and "optimizer" not in state
                lrs = [g["lr"] for g in opt.param_groups]
                sched2 = SWALRS[name](mod.optim.swa_utils, opt)  # its first step moves lr
                sched2.load_state_dict(state)
                for g, lr in zip(opt.param_groups, lrs):
                    g["lr"] = lr
                sched = sched2
        res.append(out)
    np.testing.assert_allclose(res[0], res[1], rtol=1e-13)
    assert res[0][-1] != [1.0, 0.3]  # the rates did move to swa_lr
