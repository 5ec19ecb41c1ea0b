"""numbagrad.nn: Module behaviour, layers, losses, init, utils and functional, checked
against PyTorch (float64, to 1e-10) where torch is installed."""

import copy
import math
import pickle
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F
from numbagrad import nn

RTOL, ATOL = 1e-10, 1e-12


def _torch():
    return pytest.importorskip("torch")


def _t(a, torch, requires_grad=False):
    """A torch tensor with a copy of ``a`` (ndarray or numbagrad tensor)."""
    if isinstance(a, numbagrad.Tensor):
        a = a.detach().numpy()
    t = torch.tensor(np.array(a))
    return t.requires_grad_(requires_grad)


def _n(a, requires_grad=False):
    t = numbagrad.tensor(np.array(a))
    return t.requires_grad_(requires_grad) if requires_grad else t


def _close(ours, theirs, rtol=RTOL, atol=ATOL):
    a = ours.detach().numpy() if isinstance(ours, numbagrad.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _copy_to_torch(ours, theirs):
    import torch

    sd = {k: torch.tensor(v.numpy().copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(sd)


# -- Parameter ---------------------------------------------------------------------------
def test_parameter_basics():
    data = numbagrad.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, numbagrad.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert type(p * 2) is numbagrad.Tensor and type(p + p) is numbagrad.Tensor
    assert type(p.detach()) is numbagrad.Tensor
    p.data[0] = 5.0  # shares memory with ``data``
    assert data.tolist() == [5.0, 2.0]
    q = nn.Parameter(numbagrad.zeros(2), requires_grad=False)
    assert not q.requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(numbagrad.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0])


def test_parameter_grad_backward_and_update():
    p = nn.Parameter(numbagrad.tensor([1.0, -2.0, 3.0]))
    (p * p).sum().backward()
    assert p.grad.tolist() == [2.0, -4.0, 6.0]
    with numbagrad.no_grad():
        p.sub_(0.5 * p.grad)
    assert type(p) is nn.Parameter and p.is_leaf and p.requires_grad
    assert p.tolist() == [0.0, 0.0, 0.0]
    p.grad = None
    (p.sum() * 2).backward()
    assert p.grad.tolist() == [2.0, 2.0, 2.0]


def test_parameter_under_func_transforms():
    from numbagrad import func

    p = nn.Parameter(numbagrad.tensor([1.0, 2.0]))
    assert func.grad(lambda x: (x * x).sum())(p).tolist() == [2.0, 4.0]
    assert func.vmap(lambda x: x * 3)(p).tolist() == [3.0, 6.0]
    j = func.jacrev(lambda x: x * x)(p)
    assert j.tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_parameter_copy_and_pickle():
    p = nn.Parameter(numbagrad.tensor([1.0, 2.0]))
    p.grad = numbagrad.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.tolist() == [1.0, 2.0] and q.grad.tolist() == [0.5, 0.5]
    q.data[0] = 9.0
    assert p.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and r.tolist() == [1.0, 2.0]


# -- Module registration and traversal ---------------------------------------------------
class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(numbagrad.ones(1))
        self.register_buffer("steps", numbagrad.zeros(1))
        self.register_buffer("cache", numbagrad.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal():
    net = _Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_parameters(prefix="m", recurse=False)] == ["m.scale"]
    assert len(list(net.parameters())) == 5
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert next(iter(net.children())) is net.fc1
    assert net.get_submodule("fc2") is net.fc2
    assert net.get_parameter("fc1.bias") is net.fc1.bias
    assert net.get_buffer("steps") is net.steps
    with pytest.raises(AttributeError, match=re.escape("has no attribute `nope`")):
        net.get_submodule("nope")
    with pytest.raises(AttributeError, match=re.escape("not an nn.Parameter")):
        net.get_parameter("fc1.in_features")
    with pytest.raises(AttributeError, match="'_Net' object has no attribute 'missing'"):
        _ = net.missing
    assert "fc1" in dir(net) and "scale" in dir(net)


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.modules())) == 3


def test_setattr_routing_and_errors():
    m = nn.Module()
    m.w = nn.Parameter(numbagrad.zeros(2))
    assert "w" in m._parameters and "w" not in m.__dict__
    with pytest.raises(TypeError, match=r"cannot assign .* as parameter 'w'"):
        m.w = numbagrad.zeros(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == []
    m.sub = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.register_buffer("b", numbagrad.zeros(1))
    m.b = numbagrad.ones(1)
    assert m._buffers["b"].tolist() == [1.0]
    with pytest.raises(TypeError, match="as buffer 'b'"):
        m.b = 1.0
    del m.b
    assert "b" not in m._buffers
    del m.sub
    assert "sub" not in m._modules
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", numbagrad.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("nl", _nonleaf_parameter())
    m.buf2 = nn.Buffer(numbagrad.ones(2), persistent=False)
    assert "buf2" in m._buffers and "buf2" in m._non_persistent_buffers_set

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(numbagrad.zeros(1))

    with pytest.raises(AttributeError, match=re.escape("before Module.__init__")):
        Early()


def _nonleaf_parameter():
    p = nn.Parameter(numbagrad.ones(1))
    p._grad_fn = (p * 2)._grad_fn  # a Parameter with history, as a bad script could make
    return p


def test_train_eval_requires_grad_zero_grad_apply():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.3))
    assert net.training and net[1].training
    assert net.eval() is net and not net[1].training
    net.train()
    assert net[1].training
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_(True)
    net(numbagrad.ones(3, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Dropout", "Sequential"]


def test_to_double_float_keep_parameter_objects():
    net = _Net()
    w = net.fc1.weight
    net(numbagrad.ones(1, 3)).sum().backward()
    assert net.double() is net
    assert net.fc1.weight is w and w.dtype == numbagrad.float64
    assert w.grad.dtype == numbagrad.float64
    assert net.steps.dtype == numbagrad.float64
    net.float()
    assert w.dtype == numbagrad.float32
    net.to(numbagrad.float64)
    assert w.dtype == numbagrad.float64
    net.to("cpu", dtype=numbagrad.float32)
    assert w.dtype == numbagrad.float32
    net.to(numbagrad.zeros(1, dtype=numbagrad.float64))
    assert w.dtype == numbagrad.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        net.to(numbagrad.int64)
    out = net(numbagrad.ones(1, 3, dtype=numbagrad.float64))
    assert out.dtype == numbagrad.float64


def test_state_dict_round_trip():
    a, b = _Net(), _Net()
    sd = a.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert isinstance(sd, OrderedDict)
    assert not sd["fc1.weight"].requires_grad and type(sd["fc1.weight"]) is numbagrad.Tensor
    assert a.state_dict(keep_vars=True)["fc1.weight"] is a.fc1.weight
    assert next(iter(a.state_dict(prefix="net."))) == "net.scale"
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    for k, v in b.state_dict().items():
        assert np.array_equal(v.numpy(), sd[k].numpy())
    w = b.fc1.weight
    b.load_state_dict(sd)
    assert b.fc1.weight is w  # copied in place
    x = numbagrad.randn(2, 3)
    assert np.allclose(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_state_dict_errors():
    net = _Net()
    sd = net.state_dict()
    bad = dict(sd)
    bad["fc1.weight"] = numbagrad.zeros(3, 3)
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for fc1.weight: copying a param "
        r"with shape numbagrad.Size\(\[3, 3\]\) from checkpoint, the shape in "
        r"current model is numbagrad.Size\(\[4, 3\]\)",
    ):
        net.load_state_dict(bad)
    missing = {k: v for k, v in sd.items() if k != "fc2.bias"}
    missing["extra"] = numbagrad.zeros(1)
    missing["fc1.extra"] = numbagrad.zeros(1)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(missing)
    msg = str(info.value)
    assert msg.startswith(
        "Error(s) in loading state_dict for _Net:\n\t"
        'Missing key(s) in state_dict: "fc2.bias". \n\t'
        "Unexpected key(s) in state_dict: "
    )
    assert '"extra"' in msg and '"fc1.extra"' in msg
    res = net.load_state_dict(missing, strict=False)
    assert res.missing_keys == ["fc2.bias"]
    assert sorted(res.unexpected_keys) == ["extra", "fc1.extra"]
    with pytest.raises(RuntimeError, match=re.escape("expected numbagrad.Tensor")):
        net.load_state_dict({**sd, "scale": 1.0})


def test_load_state_dict_shared_module_matches_torch():
    torch = _torch()
    lin = nn.Linear(1, 1)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    tlin = torch.nn.Linear(1, 1)
    tseq = torch.nn.Sequential(tlin, torch.nn.ReLU(), tlin)
    assert list(seq.state_dict()) == list(tseq.state_dict())
    seq.load_state_dict(
        {
            k: numbagrad.full(tuple(v.shape), float(i))
            for i, (k, v) in enumerate(seq.state_dict().items())
        }
    )
    tseq.load_state_dict(
        {
            k: torch.full(tuple(v.shape), float(i))
            for i, (k, v) in enumerate(tseq.state_dict().items())
        }
    )
    assert lin.weight.tolist() == tlin.weight.tolist() == [[2.0]]  # the last path wins
    part = {"0.weight": numbagrad.ones(1, 1), "0.bias": numbagrad.ones(1)}
    res = seq.load_state_dict(part, strict=False)
    tres = tseq.load_state_dict(
        {k: torch.ones(tuple(v.shape)) for k, v in part.items()}, strict=False
    )
    assert res.missing_keys == tres.missing_keys == ["2.weight", "2.bias"]


def test_load_state_dict_assign():
    lin = nn.Linear(2, 2)
    sd = {"weight": numbagrad.ones(2, 2), "bias": numbagrad.zeros(2)}
    lin.load_state_dict(sd, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    assert lin.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_load_state_dict_matches_torch_messages():
    torch = _torch()
    t = torch.nn.Linear(3, 4)
    with pytest.raises(RuntimeError) as theirs:
        t.load_state_dict({"weight": torch.zeros(4, 3), "foo": torch.zeros(1)})
    ours_m = nn.Linear(3, 4)
    with pytest.raises(RuntimeError) as ours:
        ours_m.load_state_dict({"weight": numbagrad.zeros(4, 3), "foo": numbagrad.zeros(1)})
    assert str(ours.value) == str(theirs.value)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out) or out + 1)
    x = numbagrad.ones(1, 2)
    y = lin(x)
    assert np.allclose(y.detach().numpy(), lin.bias.detach().numpy() + 1)
    assert len(calls) == 1
    h1.remove()
    h2.remove()
    h2.remove()  # a second remove does nothing
    assert np.allclose(lin(x).detach().numpy(), F.linear(x, lin.weight, lin.bias).detach().numpy())
    order = []
    lin.register_forward_hook(lambda m, a, o: order.append("b"))
    lin.register_forward_hook(lambda m, a, o: order.append("a"), prepend=True)
    lin.register_forward_pre_hook(
        lambda m, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True
    )
    lin.register_forward_hook(lambda m, a, k, o: order.append(("kw", k)), with_kwargs=True)
    lin(x)
    assert order == ["a", "b", ("kw", {})]
    with nn.Identity().register_forward_hook(lambda m, a, o: None) as h:
        assert isinstance(h, nn.modules.module.RemovableHandle)


def test_forward_hook_always_call():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, a, o: seen.append(o), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(numbagrad.ones(1))
    assert seen == [None]


def test_module_without_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(numbagrad.ones(1))
    with pytest.raises(NotImplementedError):
        nn.ModuleList([nn.ReLU()])(numbagrad.ones(1))


def test_module_deepcopy_and_pickle():
    net = _Net()
    c = copy.deepcopy(net)
    assert c.fc1.weight is not net.fc1.weight
    assert np.array_equal(c.fc1.weight.detach().numpy(), net.fc1.weight.detach().numpy())
    assert isinstance(c.fc1.weight, nn.Parameter)
    p = pickle.loads(pickle.dumps(net))
    assert [n for n, _ in p.named_parameters()] == [n for n, _ in net.named_parameters()]


# -- repr --------------------------------------------------------------------------------
def _repr_pairs(torch):
    tn = torch.nn
    return [
        (nn.Linear(3, 2), tn.Linear(3, 2)),
        (nn.Linear(3, 2, bias=False), tn.Linear(3, 2, bias=False)),
        (nn.Bilinear(2, 3, 4), tn.Bilinear(2, 3, 4)),
        (nn.Identity(), tn.Identity()),
        (nn.ReLU(), tn.ReLU()),
        (nn.ReLU(inplace=True), tn.ReLU(inplace=True)),
        (nn.ReLU6(), tn.ReLU6()),
        (nn.Tanh(), tn.Tanh()),
        (nn.Sigmoid(), tn.Sigmoid()),
        (nn.Softplus(beta=2, threshold=10), tn.Softplus(beta=2, threshold=10)),
        (nn.GELU(), tn.GELU()),
        (nn.GELU("tanh"), tn.GELU("tanh")),
        (nn.SiLU(), tn.SiLU()),
        (nn.ELU(0.5, True), tn.ELU(0.5, True)),
        (nn.LeakyReLU(0.2), tn.LeakyReLU(0.2)),
        (nn.LeakyReLU(inplace=True), tn.LeakyReLU(inplace=True)),
        (nn.Softmax(dim=1), tn.Softmax(dim=1)),
        (nn.LogSoftmax(-1), tn.LogSoftmax(-1)),
        (nn.Softmin(0), tn.Softmin(0)),
        (nn.Hardtanh(), tn.Hardtanh()),
        (nn.Hardtanh(-2, 3, True), tn.Hardtanh(-2, 3, True)),
        (nn.SELU(), tn.SELU()),
        (nn.SELU(True), tn.SELU(True)),
        (nn.LogSigmoid(), tn.LogSigmoid()),
        (nn.Softsign(), tn.Softsign()),
        (nn.Mish(), tn.Mish()),
        (nn.KLDivLoss(), tn.KLDivLoss()),
        (nn.Dropout(0.25), tn.Dropout(0.25)),
        (nn.LayerNorm([3, 4], eps=1e-6), tn.LayerNorm([3, 4], eps=1e-6)),
        (nn.LayerNorm(4, bias=False), tn.LayerNorm(4, bias=False)),
        (nn.LayerNorm(4, elementwise_affine=False), tn.LayerNorm(4, elementwise_affine=False)),
        (nn.Flatten(), tn.Flatten()),
        (nn.Unflatten(1, (2, 5)), tn.Unflatten(1, (2, 5))),
        (nn.MSELoss(), tn.MSELoss()),
        (nn.CrossEntropyLoss(), tn.CrossEntropyLoss()),
        (nn.GaussianNLLLoss(), tn.GaussianNLLLoss()),
        (
            nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Tanh())),
            tn.Sequential(tn.Linear(3, 4), tn.ReLU(), tn.Sequential(tn.Linear(4, 4), tn.Tanh())),
        ),
        (
            nn.Sequential(OrderedDict(fc=nn.Linear(1, 1), act=nn.ReLU())),
            tn.Sequential(OrderedDict(fc=tn.Linear(1, 1), act=tn.ReLU())),
        ),
        (
            nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)]),
            tn.ModuleList([tn.Linear(2, 2), tn.Linear(2, 2), tn.ReLU(), tn.Linear(2, 2)]),
        ),
        (nn.ModuleList(), tn.ModuleList()),
        (
            nn.ModuleDict({"a": nn.Linear(1, 2), "b": nn.ModuleList([nn.ReLU()])}),
            tn.ModuleDict({"a": tn.Linear(1, 2), "b": tn.ModuleList([tn.ReLU()])}),
        ),
        (
            nn.ParameterList([numbagrad.zeros(2), numbagrad.zeros(3, 1)]),
            tn.ParameterList([torch.zeros(2), torch.zeros(3, 1)]),
        ),
        (
            nn.ParameterDict({"a": numbagrad.zeros(2), "b": numbagrad.zeros(1, 2)}),
            tn.ParameterDict({"a": torch.zeros(2), "b": torch.zeros(1, 2)}),
        ),
    ]


def test_repr_matches_torch():
    torch = _torch()
    for ours, theirs in _repr_pairs(torch):
        assert repr(ours) == repr(theirs).replace("torch.", "numbagrad."), repr(theirs)


def test_custom_module_repr():
    torch = _torch()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2), nn.GELU())
            self.head = nn.Linear(2, 1)

        def extra_repr(self):
            return "custom=1"

    class TBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.GELU())
            self.head = torch.nn.Linear(2, 1)

        def extra_repr(self):
            return "custom=1"

    assert repr(Block()).replace("Block", "X") == repr(TBlock()).replace("TBlock", "X")


# -- containers --------------------------------------------------------------------------
def test_sequential_container_ops():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b
    assert list(seq) == [a, b]
    seq.append(c)
    assert seq[2] is c and type(seq[1:]) is nn.Sequential and list(seq[1:]) == [b, c]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[1]
    assert list(seq._modules) == ["0", "1"] and seq[1] is c
    seq.insert(1, b)
    assert list(seq) == [a, b, c]
    assert seq.pop(1) is b and len(seq) == 2
    seq.extend([nn.Identity()])
    assert len(seq) == 3 and len(seq + nn.Sequential(b)) == 4
    with pytest.raises(IndexError):
        seq[5]
    od = nn.Sequential(OrderedDict(first=a, second=c))
    assert od.first is a and list(od._modules) == ["first", "second"]
    assert od(numbagrad.ones(4, 2)).shape == (4, 1)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml += [nn.Tanh()]
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2
    del ml[0]
    assert type(ml[0]) is nn.Linear and len(ml) == 3
    assert len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert md.pop("b").__class__ is nn.ReLU and list(md.keys()) == ["a", "c"]
    assert [k for k, _ in md.items()] == ["a", "c"]
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict():
    pl = nn.ParameterList([numbagrad.zeros(2)])
    pl.append(numbagrad.ones(3))
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl[0] = numbagrad.ones(1)
    assert pl[0].tolist() == [1.0]
    pd = nn.ParameterDict({"w": numbagrad.zeros(2)})
    pd["b"] = numbagrad.zeros(1)
    assert list(pd) == ["w", "b"] and isinstance(pd["b"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["w", "b"]
    del pd["w"]
    assert list(pd.keys()) == ["b"] and "w" not in pd

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = nn.ParameterList([numbagrad.zeros(1), numbagrad.zeros(2)])

    assert list(Holder().state_dict()) == ["ps.0", "ps.1"]


# -- layers against torch ----------------------------------------------------------------
def _layer_cases(torch):
    tn = torch.nn
    return [
        ("linear", lambda: nn.Linear(3, 4), lambda: tn.Linear(3, 4), [(5, 3)]),
        (
            "linear_nobias",
            lambda: nn.Linear(3, 2, bias=False),
            lambda: tn.Linear(3, 2, bias=False),
            [(2, 6, 3)],
        ),
        ("linear_1d", lambda: nn.Linear(3, 2), lambda: tn.Linear(3, 2), [(3,)]),
        ("bilinear", lambda: nn.Bilinear(2, 3, 4), lambda: tn.Bilinear(2, 3, 4), [(5, 2), (5, 3)]),
        ("identity", nn.Identity, tn.Identity, [(2, 3)]),
        ("relu", nn.ReLU, tn.ReLU, [(4, 5)]),
        ("relu6", nn.ReLU6, tn.ReLU6, [(4, 5)]),
        ("tanh", nn.Tanh, tn.Tanh, [(4, 5)]),
        ("sigmoid", nn.Sigmoid, tn.Sigmoid, [(4, 5)]),
        (
            "softplus",
            lambda: nn.Softplus(beta=2.0, threshold=3.0),
            lambda: tn.Softplus(beta=2.0, threshold=3.0),
            [(4, 5)],
        ),
        ("gelu", nn.GELU, tn.GELU, [(4, 5)]),
        ("gelu_tanh", lambda: nn.GELU("tanh"), lambda: tn.GELU("tanh"), [(4, 5)]),
        ("silu", nn.SiLU, tn.SiLU, [(4, 5)]),
        ("elu", lambda: nn.ELU(0.7), lambda: tn.ELU(0.7), [(4, 5)]),
        ("leaky_relu", lambda: nn.LeakyReLU(0.2), lambda: tn.LeakyReLU(0.2), [(4, 5)]),
        ("softmax", lambda: nn.Softmax(dim=1), lambda: tn.Softmax(dim=1), [(3, 4, 2)]),
        ("log_softmax", lambda: nn.LogSoftmax(dim=-1), lambda: tn.LogSoftmax(dim=-1), [(3, 4)]),
        ("softmin", lambda: nn.Softmin(dim=0), lambda: tn.Softmin(dim=0), [(3, 4)]),
        ("hardtanh", lambda: nn.Hardtanh(-2.0, 1.5), lambda: tn.Hardtanh(-2.0, 1.5), [(4, 5)]),
        ("selu", nn.SELU, tn.SELU, [(4, 5)]),
        ("logsigmoid", nn.LogSigmoid, tn.LogSigmoid, [(4, 5)]),
        ("softsign", nn.Softsign, tn.Softsign, [(4, 5)]),
        ("mish", nn.Mish, tn.Mish, [(4, 5)]),
        ("layer_norm", lambda: nn.LayerNorm(4), lambda: tn.LayerNorm(4), [(3, 4)]),
        (
            "layer_norm_2d",
            lambda: nn.LayerNorm((3, 4), eps=1e-3),
            lambda: tn.LayerNorm((3, 4), eps=1e-3),
            [(2, 3, 4)],
        ),
        (
            "layer_norm_nobias",
            lambda: nn.LayerNorm(4, bias=False),
            lambda: tn.LayerNorm(4, bias=False),
            [(3, 4)],
        ),
        (
            "layer_norm_plain",
            lambda: nn.LayerNorm(4, elementwise_affine=False),
            lambda: tn.LayerNorm(4, elementwise_affine=False),
            [(3, 4)],
        ),
        ("flatten", nn.Flatten, tn.Flatten, [(2, 3, 4)]),
        ("flatten_range", lambda: nn.Flatten(0, 1), lambda: tn.Flatten(0, 1), [(2, 3, 4)]),
        ("unflatten", lambda: nn.Unflatten(1, (2, 3)), lambda: tn.Unflatten(1, (2, 3)), [(4, 6)]),
        ("dropout_eval", lambda: nn.Dropout(0.5).eval(), lambda: tn.Dropout(0.5).eval(), [(3, 3)]),
        (
            "sequential",
            lambda: nn.Sequential(
                nn.Linear(3, 5), nn.GELU(), nn.LayerNorm(5), nn.Linear(5, 2), nn.Softplus()
            ),
            lambda: tn.Sequential(
                tn.Linear(3, 5), tn.GELU(), tn.LayerNorm(5), tn.Linear(5, 2), tn.Softplus()
            ),
            [(4, 3)],
        ),
    ]


def _layer_ids():
    return [
        "linear",
        "linear_nobias",
        "linear_1d",
        "bilinear",
        "identity",
        "relu",
        "relu6",
        "tanh",
        "sigmoid",
        "softplus",
        "gelu",
        "gelu_tanh",
        "silu",
        "elu",
        "leaky_relu",
        "softmax",
        "log_softmax",
        "softmin",
        "hardtanh",
        "selu",
        "logsigmoid",
        "softsign",
        "mish",
        "layer_norm",
        "layer_norm_2d",
        "layer_norm_nobias",
        "layer_norm_plain",
        "flatten",
        "flatten_range",
        "unflatten",
        "dropout_eval",
        "sequential",
    ]


@pytest.mark.parametrize("case", _layer_ids())
def test_layer_matches_torch(case):
    torch = _torch()
    _name, make, make_t, shapes = next(c for c in _layer_cases(torch) if c[0] == case)
    rng = np.random.default_rng(sum(map(ord, case)))
    ours = make().double()
    theirs = make_t().double()
    _copy_to_torch(ours, theirs)
    if case == "layer_norm" or case == "layer_norm_2d":  # non-trivial affine parameters
        with numbagrad.no_grad():
            for p in ours.parameters():
                p.copy_(numbagrad.tensor(rng.normal(size=tuple(p.shape))))
        _copy_to_torch(ours, theirs)
    arrays = [rng.normal(size=s) * 3 for s in shapes]
    xs = [_n(a, True) for a in arrays]
    txs = [_t(a, torch, True) for a in arrays]
    y = ours(*xs)
    ty = theirs(*txs)
    _close(y, ty)
    g = rng.normal(size=tuple(ty.shape))
    (y * _n(g)).sum().backward()
    (ty * _t(g, torch)).sum().backward()
    for x, tx in zip(xs, txs, strict=True):
        _close(x.grad, tx.grad)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        _close(p.grad, tparams[pname].grad)


def test_inplace_activations():
    torch = _torch()
    for ours, theirs in [
        (nn.ReLU(True), torch.nn.ReLU(True)),
        (nn.ELU(inplace=True), torch.nn.ELU(inplace=True)),
        (nn.LeakyReLU(inplace=True), torch.nn.LeakyReLU(inplace=True)),
        (nn.SiLU(True), torch.nn.SiLU(True)),
        (nn.ReLU6(True), torch.nn.ReLU6(True)),
        (nn.Hardtanh(inplace=True), torch.nn.Hardtanh(inplace=True)),
        (nn.SELU(True), torch.nn.SELU(True)),
        (nn.Mish(True), torch.nn.Mish(True)),
    ]:
        a = np.array([-2.0, -0.5, 0.5, 7.0])
        x, tx = _n(a), _t(a, torch)
        assert ours(x) is x
        theirs(tx)
        _close(x, tx)


def test_linear_default_init_bounds():
    numbagrad.manual_seed(0)
    lin = nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)
    w = lin.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(lin.bias.detach().numpy()).max() <= bound
    bil = nn.Bilinear(16, 3, 4)
    assert np.abs(bil.weight.detach().numpy()).max() <= 0.25
    assert lin.weight.dtype == numbagrad.float32
    assert nn.Linear(2, 2, dtype=numbagrad.float64).weight.dtype == numbagrad.float64
    numbagrad.manual_seed(3)
    a = nn.Linear(4, 4).weight.detach().numpy().copy()
    numbagrad.manual_seed(3)
    assert np.array_equal(a, nn.Linear(4, 4).weight.detach().numpy())


def test_dropout_train_and_eval():
    numbagrad.manual_seed(1)
    d = nn.Dropout(0.25)
    x = numbagrad.ones(20000, dtype=numbagrad.float64, requires_grad=True)
    y = d(x)
    vals = set(np.unique(y.detach().numpy()).tolist())
    assert vals == {0.0, 1 / 0.75}
    frac = float((y == 0).double().mean())
    assert abs(frac - 0.25) < 0.02
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), y.detach().numpy())  # grad is the mask
    numbagrad.manual_seed(1)
    assert np.array_equal(d(x).detach().numpy(), y.detach().numpy())
    d.eval()
    assert d(x) is x
    assert float(F.dropout(x, 1.0).abs().sum()) == 0.0
    assert F.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match=re.escape("between 0 and 1, but got 1.5")):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_dropout_under_vmap_follows_randomness():
    from numbagrad import func

    x = numbagrad.ones(6, 50)
    with pytest.raises(RuntimeError, match="randomness"):
        func.vmap(lambda r: F.dropout(r, 0.5))(x)
    same = func.vmap(lambda r: F.dropout(r, 0.5), randomness="same")(x).numpy()
    assert all(np.array_equal(same[0], row) for row in same)
    diff = func.vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x).numpy()
    assert not all(np.array_equal(diff[0], row) for row in diff)
    assert set(np.unique(diff).tolist()) <= {0.0, 2.0}


# -- losses against torch ----------------------------------------------------------------
def _loss_inputs(rng, kind, shape):
    if kind == "prob":
        return rng.uniform(0.05, 0.95, shape)
    if kind == "positive":
        return rng.uniform(0.2, 2.0, shape)
    return rng.normal(size=shape)


_LOSS_CASES = [
    # (id, functional name, [(kind, shape) of float args], kwargs)
    ("mse", "mse_loss", [("real", (4, 3)), ("real", (4, 3))], {}),
    ("mse_sum", "mse_loss", [("real", (4, 3)), ("real", (4, 3))], {"reduction": "sum"}),
    ("mse_none", "mse_loss", [("real", (4, 3)), ("real", (4, 3))], {"reduction": "none"}),
    (
        "mse_weight",
        "mse_loss",
        [("real", (4, 3)), ("real", (4, 3))],
        {"weight": ("positive", (4, 3))},
    ),
    ("l1", "l1_loss", [("real", (5,)), ("real", (5,))], {}),
    (
        "l1_weight_sum",
        "l1_loss",
        [("real", (2, 3)), ("real", (2, 3))],
        {"weight": ("positive", (2, 3)), "reduction": "sum"},
    ),
    (
        "l1_weight",
        "l1_loss",
        [("real", (2, 3)), ("real", (2, 3))],
        {"weight": ("positive", (2, 3))},
    ),
    ("smooth_l1", "smooth_l1_loss", [("real", (4, 3)), ("real", (4, 3))], {"beta": 0.7}),
    (
        "smooth_l1_none",
        "smooth_l1_loss",
        [("real", (4, 3)), ("real", (4, 3))],
        {"reduction": "none"},
    ),
    ("smooth_l1_beta0", "smooth_l1_loss", [("real", (4,)), ("real", (4,))], {"beta": 0.0}),
    ("huber", "huber_loss", [("real", (4, 3)), ("real", (4, 3))], {"delta": 0.6}),
    ("huber_sum", "huber_loss", [("real", (4, 3)), ("real", (4, 3))], {"reduction": "sum"}),
    (
        "huber_weight",
        "huber_loss",
        [("real", (4, 3)), ("real", (4, 3))],
        {"weight": ("positive", (4, 3))},
    ),
    ("bce", "binary_cross_entropy", [("prob", (4, 3)), ("prob", (4, 3))], {}),
    (
        "bce_weight_sum",
        "binary_cross_entropy",
        [("prob", (4, 3)), ("prob", (4, 3))],
        {"weight": ("positive", (3,)), "reduction": "sum"},
    ),
    ("bce_none", "binary_cross_entropy", [("prob", (5,)), ("prob", (5,))], {"reduction": "none"}),
    ("bce_logits", "binary_cross_entropy_with_logits", [("real", (4, 3)), ("prob", (4, 3))], {}),
    (
        "bce_logits_pos_weight",
        "binary_cross_entropy_with_logits",
        [("real", (4, 3)), ("prob", (4, 3))],
        {"pos_weight": ("positive", (3,)), "weight": ("positive", (4, 3))},
    ),
    (
        "bce_logits_none",
        "binary_cross_entropy_with_logits",
        [("real", (4, 3)), ("prob", (4, 3))],
        {"reduction": "none", "pos_weight": ("positive", (3,))},
    ),
    (
        "kl_div_batchmean",
        "kl_div",
        [("real", (4, 3)), ("prob", (4, 3))],
        {"reduction": "batchmean"},
    ),
    (
        "kl_div_log_target_none",
        "kl_div",
        [("real", (4, 3)), ("real", (4, 3))],
        {"reduction": "none", "log_target": True},
    ),
    ("kl_div_sum", "kl_div", [("real", (5,)), ("prob", (5,))], {"reduction": "sum"}),
    (
        "gaussian_nll",
        "gaussian_nll_loss",
        [("real", (4, 3)), ("real", (4, 3)), ("positive", (4, 3))],
        {},
    ),
    (
        "gaussian_nll_full_sum",
        "gaussian_nll_loss",
        [("real", (4, 3)), ("real", (4, 3)), ("positive", (4, 1))],
        {"full": True, "reduction": "sum"},
    ),
    (
        "gaussian_nll_homo",
        "gaussian_nll_loss",
        [("real", (4, 3)), ("real", (4, 3)), ("positive", (4,))],
        {"reduction": "none"},
    ),
]


@pytest.mark.parametrize("case", [c[0] for c in _LOSS_CASES])
def test_loss_matches_torch(case):
    torch = _torch()
    _, name, specs, kwargs = next(c for c in _LOSS_CASES if c[0] == case)
    rng = np.random.default_rng(len(case) * 7919 + sum(map(ord, case)))
    arrays = [_loss_inputs(rng, k, s) for k, s in specs]
    kw_arrays = {k: _loss_inputs(rng, *v) for k, v in kwargs.items() if isinstance(v, tuple)}
    ours_args = [_n(a, True) for a in arrays]
    theirs_args = [_t(a, torch, True) for a in arrays]
    ours_kw = {k: (_n(kw_arrays[k]) if k in kw_arrays else v) for k, v in kwargs.items()}
    theirs_kw = {k: (_t(kw_arrays[k], torch) if k in kw_arrays else v) for k, v in kwargs.items()}
    y = getattr(F, name)(*ours_args, **ours_kw)
    ty = getattr(torch.nn.functional, name)(*theirs_args, **theirs_kw)
    _close(y, ty)
    g = rng.normal(size=tuple(ty.shape))
    (y * _n(g)).sum().backward()
    (ty * _t(g, torch)).sum().backward()
    for a, ta in zip(ours_args, theirs_args, strict=True):
        _close(a.grad, ta.grad)


_CE_CASES = [
    ("ce_2d", (5, 4), "idx", {}),
    ("ce_1d", (4,), "idx", {}),
    ("ce_nd", (3, 4, 2, 2), "idx", {}),
    ("ce_weight", (6, 4), "idx", {"weight": True}),
    ("ce_ignore", (6, 4), "idx", {"ignore_index": 1}),
    ("ce_ignore_weight_nd", (3, 4, 5), "idx", {"ignore_index": 2, "weight": True}),
    ("ce_smooth", (6, 4), "idx", {"label_smoothing": 0.2}),
    (
        "ce_smooth_weight_ignore",
        (6, 4),
        "idx",
        {"label_smoothing": 0.3, "weight": True, "ignore_index": 0},
    ),
    ("ce_smooth_none_nd", (3, 4, 2), "idx", {"label_smoothing": 0.1, "reduction": "none"}),
    (
        "ce_smooth_sum_weight",
        (6, 4),
        "idx",
        {"label_smoothing": 0.1, "reduction": "sum", "weight": True},
    ),
    ("ce_sum", (5, 4), "idx", {"reduction": "sum"}),
    ("ce_none", (5, 4), "idx", {"reduction": "none", "ignore_index": 3}),
    ("ce_prob", (5, 4), "prob", {}),
    ("ce_prob_1d", (4,), "prob", {}),
    ("ce_prob_nd_weight_smooth", (3, 4, 2), "prob", {"weight": True, "label_smoothing": 0.2}),
    ("ce_prob_none", (5, 4), "prob", {"reduction": "none"}),
    ("ce_prob_sum", (5, 4), "prob", {"reduction": "sum", "weight": True}),
    ("nll_2d", (5, 4), "nll", {}),
    ("nll_weight_ignore", (8, 4), "nll", {"weight": True, "ignore_index": 2}),
    ("nll_nd_none", (3, 4, 2), "nll", {"reduction": "none"}),
    ("nll_1d_sum", (4,), "nll", {"reduction": "sum", "weight": True}),
]


@pytest.mark.parametrize("case", [c[0] for c in _CE_CASES])
def test_cross_entropy_nll_match_torch(case):
    torch = _torch()
    _, shape, kind, kwargs = next(c for c in _CE_CASES if c[0] == case)
    rng = np.random.default_rng(sum(map(ord, case)))
    c = shape[0] if len(shape) == 1 else shape[1]
    x = rng.normal(size=shape) * 2
    if kind == "prob":
        p = rng.uniform(size=shape)
        target = p / p.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
        ours_t, theirs_t = _n(target, True), _t(target, torch, True)
    else:
        tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
        target = rng.integers(0, c, tshape)
        ours_t, theirs_t = _n(target), _t(target, torch)
    kw = dict(kwargs)
    tkw = dict(kwargs)
    if kw.pop("weight", False):
        w = rng.uniform(0.5, 2.0, c)
        kw["weight"], tkw["weight"] = _n(w), _t(w, torch)
    fn = "nll_loss" if kind == "nll" else "cross_entropy"
    xs, txs = _n(x, True), _t(x, torch, True)
    if kind == "nll":
        y = F.nll_loss(F.log_softmax(xs, 0 if len(shape) == 1 else 1), ours_t, **kw)
        ty = torch.nn.functional.nll_loss(
            torch.log_softmax(txs, 0 if len(shape) == 1 else 1), theirs_t, **tkw
        )
    else:
        y = getattr(F, fn)(xs, ours_t, **kw)
        ty = getattr(torch.nn.functional, fn)(txs, theirs_t, **tkw)
    _close(y, ty)
    g = rng.normal(size=tuple(ty.shape))
    (y * _n(g)).sum().backward()
    (ty * _t(g, torch)).sum().backward()
    _close(xs.grad, txs.grad)
    if kind == "prob":
        _close(ours_t.grad, theirs_t.grad)


def test_loss_modules_match_functional():
    torch = _torch()
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(4, 3)), rng.uniform(0.1, 0.9, (4, 3))
    idx = rng.integers(0, 3, 4)
    w = rng.uniform(0.5, 1.5, 3)
    pairs = [
        (nn.MSELoss(reduction="sum"), torch.nn.MSELoss(reduction="sum"), x, y),
        (nn.L1Loss(), torch.nn.L1Loss(), x, y),
        (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3), x, y),
        (nn.HuberLoss(delta=0.4), torch.nn.HuberLoss(delta=0.4), x, y),
        (nn.BCELoss(weight=_n(w)), torch.nn.BCELoss(weight=_t(w, torch)), y, y[::-1].copy()),
        (
            nn.BCEWithLogitsLoss(pos_weight=_n(w)),
            torch.nn.BCEWithLogitsLoss(pos_weight=_t(w, torch)),
            x,
            y,
        ),
        (
            nn.CrossEntropyLoss(weight=_n(w), label_smoothing=0.1),
            torch.nn.CrossEntropyLoss(weight=_t(w, torch), label_smoothing=0.1),
            x,
            idx,
        ),
        (nn.NLLLoss(ignore_index=0), torch.nn.NLLLoss(ignore_index=0), x, idx),
        (
            nn.KLDivLoss(reduction="batchmean", log_target=True),
            torch.nn.KLDivLoss(reduction="batchmean", log_target=True),
            x,
            x[::-1].copy(),
        ),
    ]
    for ours, theirs, a, b in pairs:
        _close(ours(_n(a), _n(b)), theirs(_t(a, torch), _t(b, torch)))
    ours = nn.GaussianNLLLoss(full=True, eps=0.5)
    theirs = torch.nn.GaussianNLLLoss(full=True, eps=0.5)
    v = rng.uniform(0.1, 1.0, (4, 3))
    vo, vt = _n(v, True), _t(v, torch, True)
    lo, lt = ours(_n(x), _n(y), vo), theirs(_t(x, torch), _t(y, torch), vt)
    _close(lo, lt)
    lo.backward()
    lt.backward()
    _close(vo.grad, vt.grad)  # the gradient passes through the eps clamp
    assert list(nn.CrossEntropyLoss(weight=_n(w)).state_dict()) == ["weight"]


def test_loss_option_errors():
    x = numbagrad.randn(3, 4)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        nn.L1Loss(reduction="foo")
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(x, numbagrad.tensor([1, 2, 3], dtype=numbagrad.int32))
    with pytest.raises(IndexError, match=re.escape("Target 5 is out of bounds.")):
        F.cross_entropy(x, numbagrad.tensor([1, 2, 5]))
    with pytest.raises(
        ValueError,
        match=r"Expected input batch_size \(3\) to match target "
        r"batch_size \(2\)",
    ):
        F.cross_entropy(x, numbagrad.tensor([1, 2]))
    with pytest.raises(
        RuntimeError, match="weight tensor should be defined either for all 4 classes"
    ):
        F.cross_entropy(x, numbagrad.tensor([1, 2, 1]), weight=numbagrad.ones(3))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, x.softmax(1), ignore_index=1)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(numbagrad.tensor([1.5]), numbagrad.tensor([1.0]))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(numbagrad.tensor([0.5]), numbagrad.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, numbagrad.zeros(3))
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(x, x, -numbagrad.ones(3, 4))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, numbagrad.ones(2, 2))
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(numbagrad.zeros(3, 1), numbagrad.zeros(3))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x.softmax(1))
    kl = F.kl_div(x, numbagrad.tensor([[0.0, 0.5, 0.5, 0.0]] * 3), reduction="sum")
    assert np.isfinite(float(kl))  # zero targets contribute 0, not 0 * log(0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.mse_loss(x, x * 0, size_average=False)
    assert np.isclose(float(out), float((x * x).sum()))


def test_bce_extremes_are_finite():
    x = numbagrad.tensor([0.0, 1.0, 0.5], dtype=numbagrad.float64, requires_grad=True)
    t = numbagrad.tensor([1.0, 0.0, 1.0], dtype=numbagrad.float64)
    loss = F.binary_cross_entropy(x, t, reduction="none")
    assert loss.tolist()[:2] == [100.0, 100.0]
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    z = numbagrad.tensor([-800.0, 800.0], dtype=numbagrad.float64, requires_grad=True)
    lz = F.binary_cross_entropy_with_logits(
        z, numbagrad.tensor([1.0, 0.0], dtype=numbagrad.float64), reduction="none"
    )
    assert lz.tolist() == [800.0, 800.0]
    lz.sum().backward()
    assert z.grad.tolist() == [-1.0, 1.0]


# -- functional against torch ------------------------------------------------------------
def _functional_cases():
    return [
        ("relu6", lambda m, x: m.nn.functional.relu6(x), (4, 5), 4.0),
        (
            "softplus",
            lambda m, x: m.nn.functional.softplus(x, beta=0.5, threshold=2.0),
            (4, 5),
            4.0,
        ),
        ("normalize", lambda m, x: m.nn.functional.normalize(x), (3, 4), 1.0),
        ("normalize_p1", lambda m, x: m.nn.functional.normalize(x, p=1.0, dim=0), (3, 4), 1.0),
        (
            "softmax_dtype",
            lambda m, x: m.nn.functional.softmax(x, dim=0, dtype=m.float64),
            (3, 4),
            1.0,
        ),
        ("log_softmax", lambda m, x: m.nn.functional.log_softmax(x, 1), (3, 4), 1.0),
        ("layer_norm_fn", lambda m, x: m.nn.functional.layer_norm(x, (4,), eps=1e-3), (3, 4), 1.0),
        (
            "pad_constant",
            lambda m, x: m.nn.functional.pad(x, (1, 2, 0, 1), value=1.5),
            (2, 3, 4),
            1.0,
        ),
        ("pad_negative", lambda m, x: m.nn.functional.pad(x, (-1, 2, 1, -1)), (3, 4), 1.0),
        (
            "pad_reflect",
            lambda m, x: m.nn.functional.pad(x, (2, 1), mode="reflect"),
            (2, 3, 4),
            1.0,
        ),
        (
            "pad_reflect_2d",
            lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"),
            (2, 3, 4),
            1.0,
        ),
        (
            "pad_replicate",
            lambda m, x: m.nn.functional.pad(x, (2, 3, 1, 0), mode="replicate"),
            (1, 2, 3, 4),
            1.0,
        ),
        (
            "pad_circular",
            lambda m, x: m.nn.functional.pad(x, (1, 2), mode="circular"),
            (2, 3, 4),
            1.0,
        ),
        (
            "cosine_similarity",
            lambda m, x: m.nn.functional.cosine_similarity(x, x.flip(0) * 2 + 1, dim=1),
            (4, 3),
            1.0,
        ),
        (
            "cosine_similarity_bcast",
            lambda m, x: m.nn.functional.cosine_similarity(x, x[:1], dim=-1),
            (4, 3),
            1.0,
        ),
        (
            "pairwise_distance",
            lambda m, x: m.nn.functional.pairwise_distance(x, x.flip(0)),
            (4, 3),
            1.0,
        ),
        (
            "pairwise_distance_p1_keep",
            lambda m, x: m.nn.functional.pairwise_distance(x, x * 0.5, p=1.0, keepdim=True),
            (4, 3),
            1.0,
        ),
        ("elu_fn", lambda m, x: m.nn.functional.elu(x, alpha=2.0), (4, 5), 2.0),
        ("gelu_fn", lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), (4, 5), 2.0),
        ("leaky_relu_fn", lambda m, x: m.nn.functional.leaky_relu(x, 0.3), (4, 5), 2.0),
        ("linear_fn", lambda m, x: m.nn.functional.linear(x, x.t() * 0.5, x[0]), (3, 3), 1.0),
        (
            "bilinear_fn",
            lambda m, x: m.nn.functional.bilinear(x, x * 2, x.reshape(1, 3, 3).expand(2, 3, 3)),
            (3, 3),
            1.0,
        ),
    ]


@pytest.mark.parametrize("case", [c[0] for c in _functional_cases()])
def test_functional_matches_torch(case):
    torch = _torch()
    _, fn, shape, scale = next(c for c in _functional_cases() if c[0] == case)
    rng = np.random.default_rng(sum(map(ord, case)))
    a = rng.normal(size=shape) * scale
    x, tx = _n(a, True), _t(a, torch, True)
    y, ty = fn(numbagrad, x), fn(torch, tx)
    _close(y, ty)
    g = rng.normal(size=tuple(ty.shape))
    (y * _n(g)).sum().backward()
    (ty * _t(g, torch)).sum().backward()
    _close(x.grad, tx.grad)


def test_activation_kinks_match_torch():
    torch = _torch()
    a = np.array([-1.0, 0.0, 6.0, 7.0, 1e3, -1e3])
    for name, kw in [
        ("relu6", {}),
        ("elu", {"alpha": 1.5}),
        ("leaky_relu", {}),
        ("relu", {}),
        ("silu", {}),
        ("gelu", {}),
        ("selu", {}),
        ("hardtanh", {"min_val": -1.0, "max_val": 6.0}),
        ("logsigmoid", {}),
        ("softsign", {}),
        ("mish", {}),
    ]:
        x, tx = _n(a, True), _t(a, torch, True)
        y = getattr(F, name)(x, **kw)
        ty = getattr(torch.nn.functional, name)(tx, **kw)
        _close(y, ty)
        y.sum().backward()
        ty.sum().backward()
        _close(x.grad, tx.grad)


def test_pad_one_hot_and_errors():
    torch = _torch()
    x = numbagrad.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(
        RuntimeError, match="Padding size should be less than the corresponding input dimension"
    ):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(NotImplementedError, match="Padding size 4 is not supported for 2D"):
        F.pad(x, (1, 1, 1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="negative padding"):
        F.pad(x, (-1, 1), mode="replicate")
    idx = numbagrad.tensor([[0, 2], [1, 1]])
    oh = F.one_hot(idx)
    assert oh.dtype == numbagrad.int64
    assert oh.tolist() == torch.nn.functional.one_hot(torch.tensor([[0, 2], [1, 1]])).tolist()
    assert F.one_hot(idx, 5).shape == (2, 2, 5)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type Long"):
        F.one_hot(numbagrad.tensor([1.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(numbagrad.tensor([1, 5]), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(numbagrad.tensor([-1, 1]))
    with pytest.raises(
        RuntimeError,
        match=r"Given normalized_shape=\[4\], expected input with "
        r"shape \[\*, 4\], but got input of size\[2, 3\]",
    ):
        F.layer_norm(numbagrad.zeros(2, 3), (4,))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        s = nn.Softmax()(numbagrad.zeros(2, 3))
    assert np.allclose(s.numpy(), 1 / 3)


def test_functional_under_transforms():
    from numbagrad import func

    x = numbagrad.randn(4, 3, dtype=numbagrad.float64)
    tgt = numbagrad.tensor([0, 2, 1, 1])

    def loss(inp):
        return F.cross_entropy(inp, tgt, label_smoothing=0.1) + F.gelu(inp).sum()

    g = func.grad(loss)(x)
    xr = x.detach().requires_grad_(True)
    loss(xr).backward()
    assert np.allclose(g.numpy(), xr.grad.numpy())
    per = func.vmap(lambda row, t: F.cross_entropy(row, t))(x, tgt)
    assert np.allclose(per.numpy(), F.cross_entropy(x, tgt, reduction="none").numpy())
    probs = numbagrad.tensor(np.random.default_rng(0).uniform(0.1, 0.9, (4, 3)))
    per_bce = func.vmap(lambda p, t: F.binary_cross_entropy(p, t))(probs, probs.flip(0))
    assert np.allclose(
        per_bce.numpy(),
        F.binary_cross_entropy(probs, probs.flip(0), reduction="none").mean(1).numpy(),
    )
    lin = nn.Linear(3, 2).double()
    jac = func.jacrev(lambda inp: lin(inp))(x[0])
    assert np.allclose(jac.detach().numpy(), lin.weight.detach().numpy())


# -- init --------------------------------------------------------------------------------
def test_calculate_gain_matches_torch():
    torch = _torch()
    for nl, param in [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", math.sqrt(5)),
        ("selu", None),
    ]:
        assert nn.init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("foo")
    with pytest.raises(ValueError, match="not a valid number"):
        nn.init.calculate_gain("leaky_relu", True)


def test_init_constants():
    w = numbagrad.empty(3, 4, requires_grad=True)
    for fn, expect in [(nn.init.zeros_, 0.0), (nn.init.ones_, 1.0)]:
        assert fn(w) is w and np.all(w.detach().numpy() == expect)
    assert nn.init.constant_(w, 0.3) is w and np.allclose(w.detach().numpy(), 0.3)
    assert w.is_leaf and w.requires_grad
    assert nn.init.eye_(w).detach().numpy().tolist() == np.eye(3, 4).tolist()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        nn.init.eye_(numbagrad.empty(3))


def test_init_distributions_and_bounds():
    numbagrad.manual_seed(0)
    t = numbagrad.empty(200, 300, dtype=numbagrad.float64)
    fan_in, fan_out = 300, 200
    nn.init.uniform_(t, -0.5, 1.5)
    d = t.numpy()
    assert d.min() >= -0.5 and d.max() < 1.5 and abs(d.mean() - 0.5) < 0.01
    nn.init.normal_(t, 2.0, 0.5)
    assert abs(t.numpy().mean() - 2.0) < 0.01 and abs(t.numpy().std() - 0.5) < 0.01
    nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=-1.0, b=0.5)
    d = t.numpy()
    assert d.min() >= -1.0 and d.max() <= 0.5
    # the mean of N(0, 1) truncated to [-1, 0.5]
    from math import erf, exp, pi, sqrt

    def phi(v):
        return exp(-v * v / 2) / sqrt(2 * pi)

    def cdf(v):
        return (1 + erf(v / sqrt(2))) / 2

    mean = (phi(-1.0) - phi(0.5)) / (cdf(0.5) - cdf(-1.0))
    assert abs(d.mean() - mean) < 0.01
    with pytest.warns(UserWarning, match="more than 2 std"):  # a far tail: bisection path
        nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=4.0, b=4.5)
    assert t.numpy().min() >= 4.0 and t.numpy().max() <= 4.5
    xb = math.sqrt(6.0 / (fan_in + fan_out)) * 2.0
    nn.init.xavier_uniform_(t, gain=2.0)
    assert np.abs(t.numpy()).max() <= xb and np.abs(t.numpy()).max() > 0.99 * xb
    nn.init.xavier_normal_(t)
    assert abs(t.numpy().std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.002
    nn.init.kaiming_uniform_(t, a=0.1, nonlinearity="leaky_relu")
    kb = math.sqrt(3.0) * math.sqrt(2.0 / (1 + 0.01)) / math.sqrt(fan_in)
    assert np.abs(t.numpy()).max() <= kb and np.abs(t.numpy()).max() > 0.99 * kb
    nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2.0 / fan_out)) < 0.002
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_normal_(t, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(numbagrad.empty(3))
    conv = numbagrad.empty(8, 4, 3, 3)
    nn.init.kaiming_uniform_(conv)  # fan_in counts the receptive field: 4 * 9
    assert np.abs(conv.numpy()).max() <= math.sqrt(3.0) * math.sqrt(2 / 1.0001) / 6
    with pytest.warns(UserWarning, match="no-op"):
        nn.init.kaiming_uniform_(numbagrad.empty(0, 3))


def test_orthogonal_and_reproducibility():
    for shape in [(4, 4), (3, 6), (6, 3), (2, 3, 2)]:
        t = numbagrad.empty(*shape, dtype=numbagrad.float64)
        nn.init.orthogonal_(t, gain=2.0)
        m = t.numpy().reshape(shape[0], -1)
        if m.shape[0] <= m.shape[1]:
            assert np.allclose(m @ m.T, 4.0 * np.eye(m.shape[0]))
        else:
            assert np.allclose(m.T @ m, 4.0 * np.eye(m.shape[1]))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        nn.init.orthogonal_(numbagrad.empty(3))
    numbagrad.manual_seed(7)
    a = nn.init.normal_(numbagrad.empty(5)).tolist()
    numbagrad.manual_seed(7)
    assert nn.init.normal_(numbagrad.empty(5)).tolist() == a


def test_init_leaves_no_graph_on_parameters():
    p = nn.Parameter(numbagrad.zeros(3, 3))
    nn.init.kaiming_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    (p * 2).sum().backward()
    assert p.grad.tolist() == [[2.0] * 3] * 3


# -- utils -------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_torch(norm_type):
    torch = _torch()
    rng = np.random.default_rng(int(norm_type) if norm_type != math.inf else 99)
    grads = [rng.normal(size=(3, 2)), rng.normal(size=(4,))]
    ours = [nn.Parameter(numbagrad.zeros(*g.shape, dtype=numbagrad.float64)) for g in grads]
    theirs = [torch.nn.Parameter(torch.zeros(*g.shape, dtype=torch.float64)) for g in grads]
    for p, tp, g in zip(ours, theirs, grads, strict=True):
        p.grad = _n(g)
        tp.grad = _t(g, torch)
    total = nn.utils.clip_grad_norm_(ours, 0.5, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type=norm_type)
    _close(total, ttotal)
    for p, tp in zip(ours, theirs, strict=True):
        _close(p.grad, tp.grad)


def test_clip_grad_misc():
    p = nn.Parameter(numbagrad.zeros(2))
    assert float(nn.utils.clip_grad_norm_([p], 1.0)) == 0.0  # no gradients
    p.grad = numbagrad.tensor([0.3, 0.4])
    nn.utils.clip_grad_norm_(p, 10.0)
    assert np.allclose(p.grad.numpy(), [0.3, 0.4])  # under the limit: unchanged
    p.grad = numbagrad.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    e = nn.Parameter(numbagrad.zeros(0))
    e.grad = numbagrad.zeros(0)
    p.grad = numbagrad.tensor([1.0, -3.0])
    assert float(nn.utils.clip_grad_norm_([e, p], 1.0, norm_type="inf")) == 3.0
    q = nn.Parameter(numbagrad.zeros(3))
    q.grad = numbagrad.tensor([-5.0, 0.1, 5.0])
    assert nn.utils.clip_grad_value_([q], 0.5) is None
    assert np.allclose(q.grad.numpy(), [-0.5, 0.1, 0.5])


def test_parameters_vector_round_trip():
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(net.parameters())
    assert vec.shape == (11,)
    expected = np.concatenate([p.detach().numpy().ravel() for p in net.parameters()])
    assert np.allclose(vec.detach().numpy(), expected)
    new = numbagrad.arange(11.0)
    w = net[0].weight
    nn.utils.vector_to_parameters(new, net.parameters())
    assert net[0].weight is w and w.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert net[1].bias.tolist() == [10.0]
    with pytest.raises(TypeError, match=re.escape("expected torch.Tensor")):
        nn.utils.vector_to_parameters([1.0], net.parameters())


# -- an end-to-end fit -------------------------------------------------------------------
def test_training_loop_decreases_loss():
    numbagrad.manual_seed(0)
    x = numbagrad.randn(64, 2)
    y = (x[:, :1] * 2 - x[:, 1:]).tanh()
    model = nn.Sequential(nn.Linear(2, 16), nn.SiLU(), nn.Linear(16, 1))
    loss_fn = nn.MSELoss()
    first = None
    for _ in range(60):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        with numbagrad.no_grad():
            for p in model.parameters():
                p.sub_(0.1 * p.grad)
        first = float(loss) if first is None else first
    assert float(loss) < 0.3 * first
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.eval()(x)


# -- numbagrad.func.functional_call -------------------------------------------------------
@pytest.mark.filterwarnings("ignore::DeprecationWarning:torch")  # torch.func's own jit use
def test_functional_call_matches_torch():
    torch = _torch()
    from numbagrad.func import functional_call, grad, vmap

    numbagrad.manual_seed(0)
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    theirs = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)
    ).double()
    _copy_to_torch(ours, theirs)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    params = {k: v.detach() for k, v in ours.named_parameters()}
    tparams = {k: v.detach() for k, v in theirs.named_parameters()}

    def loss(p, inp):
        return functional_call(ours, p, (inp,)).pow(2).sum()

    def tloss(p, inp):
        return torch.func.functional_call(theirs, p, (inp,)).pow(2).sum()

    g = grad(loss)(params, _n(x))
    tg = torch.func.grad(tloss)(tparams, _t(x, torch))
    for k in params:
        _close(g[k], tg[k])
    per = vmap(lambda inp: functional_call(ours, params, inp))(_n(x))
    tper = torch.func.vmap(lambda inp: torch.func.functional_call(theirs, tparams, inp))(
        _t(x, torch)
    )
    _close(per, tper)
    from numbagrad.func import hessian

    x0, tx0 = _n(x[0]), torch.tensor(x[0])
    h = hessian(lambda w: functional_call(ours, {**params, "0.weight": w}, (x0,)).sum())(
        params["0.weight"]
    )
    th = torch.func.hessian(
        lambda w: torch.func.functional_call(theirs, {**tparams, "0.weight": w}, (tx0,)).sum()
    )(tparams["0.weight"])
    _close(h, th)
    # the module's own parameters are back in place
    assert all(isinstance(p, nn.Parameter) for p in ours.parameters())
    assert ours[0].weight is dict(ours.named_parameters())["0.weight"]


def test_functional_call_options():
    from numbagrad.func import functional_call

    lin = nn.Linear(2, 2)
    shared = nn.Sequential(lin, lin)
    x = numbagrad.ones(1, 2)
    w = numbagrad.zeros(2, 2)
    out = functional_call(shared, {"0.weight": w}, (x,))  # tied: both layers use ``w``
    assert np.allclose(out.detach().numpy(), lin.bias.detach().numpy())
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(shared, {"0.weight": w, "1.weight": numbagrad.ones(2, 2)}, (x,))
    functional_call(
        shared, {"0.weight": w, "1.weight": numbagrad.ones(2, 2)}, (x,), tie_weights=False
    )
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(lin, ({"weight": w}, {"weight": w}), (x,))
    with pytest.raises(RuntimeError, match=re.escape("Unexpected key(s): 'foo'.\n\tMissing key")):
        functional_call(lin, {"weight": w, "foo": w}, (x,), strict=True)
    assert functional_call(lin, {"bias": numbagrad.zeros(2)}, x, {}).shape == (1, 2)
    assert "foo" not in lin.__dict__
    functional_call(lin, {"foo": w}, (x,))
    assert "foo" not in lin.__dict__


def test_gaussian_nll_loss_of_an_infinite_variance_as_torch():
    # var is clamped below at eps with the gradient passed through: the clamp's shift was
    # clamp_min(var, eps) - var, NaN for an infinite var (inf - inf)
    torch = pytest.importorskip("torch")
    out = []
    for m in (numbagrad, torch):
        var = m.tensor([[math.inf], [0.0], [1e-8], [2.0]], requires_grad=True)
        loss = m.nn.functional.gaussian_nll_loss(
            m.tensor([[0.3], [1.0], [2.0], [1.0]]),
            m.tensor([[-1.5], [1.0], [0.0], [0.0]]),
            var,
            reduction="none",
        )
        loss.sum().backward()
        out.append((loss.detach().numpy(), var.grad.numpy()))
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


# -- lazy modules (issue 28) ---------------------------------------------------------------------
_LAZY = [
    ("LazyLinear", (4,), (3, 5), "Linear", (4, 5)),
    ("LazyConv1d", (4, 3), (2, 3, 8), "Conv1d", (4, 3)),
    ("LazyConv2d", (4, 3), (2, 3, 6, 6), "Conv2d", (4, 3)),
    ("LazyConv3d", (4, 2), (1, 3, 4, 4, 4), "Conv3d", (4, 3)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 5), "ConvTranspose1d", (3, 4)),
    ("LazyConvTranspose2d", (4, 3), (2, 3, 4, 4), "ConvTranspose2d", (3, 4)),
    ("LazyConvTranspose3d", (4, 2), (1, 3, 3, 3, 3), "ConvTranspose3d", (3, 4)),
    ("LazyBatchNorm1d", (), (4, 3, 5), "BatchNorm1d", (3,)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2), "BatchNorm2d", (3,)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d", (3,)),
    ("LazyInstanceNorm1d", (), (4, 3, 5), "InstanceNorm1d", (3,)),
    ("LazyInstanceNorm2d", (), (4, 3, 3, 3), "InstanceNorm2d", (3,)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2), "InstanceNorm3d", (3,)),
]


@pytest.mark.parametrize("name,args,shape,becomes,sizes", _LAZY, ids=[c[0] for c in _LAZY])
def test_lazy_module_against_torch(name, args, shape, becomes, sizes):
    """repr and state_dict before the first call, the materialized layer after it (its
    class, parameter shapes, repr), and the output with torch's layer given the same
    parameters."""
    torch = _torch()
    ours = getattr(nn, name)(*args)
    theirs = getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [repr(v) for v in ours.state_dict().values()] == [
        repr(v).replace("torch.nn.parameter", "numbagrad.nn.parameter")
        for v in theirs.state_dict().values()
    ]
    x = np.random.default_rng(0).standard_normal(shape)
    ours.double()
    theirs.double()
    out = ours(numbagrad.tensor(x))
    theirs(torch.tensor(x))
    assert type(ours).__name__ == becomes == type(theirs).__name__
    assert not hasattr(ours, "_initialize_hook")
    assert not isinstance(ours, nn.modules.lazy.LazyModuleMixin)
    assert tuple(ours.weight.shape[: len(sizes)]) == sizes
    assert ours.weight.dtype == numbagrad.float64
    assert repr(ours) == repr(theirs)
    # torch's layer with our initial values gives our output
    theirs.load_state_dict({k: _t(v, torch) for k, v in ours.state_dict().items()})
    ours.load_state_dict({k: v for k, v in ours.state_dict().items()})
    np.testing.assert_allclose(
        out.detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=RTOL, atol=1e-10
    )


def test_lazy_parameters_materialize_in_place():
    lin = nn.LazyLinear(3)
    weight = lin.weight
    opt = numbagrad.optim.SGD(lin.parameters(), lr=0.5)  # made before the first call
    lin(numbagrad.randn(2, 4)).sum().backward()
    assert lin.weight is weight and type(weight) is nn.Parameter
    before = weight.detach().clone()
    opt.step()
    assert not numbagrad.equal(before, weight.detach())
    assert isinstance(lin, nn.Linear) and lin.in_features == 4


def test_uninitialized_parameter_refuses_use():
    p = nn.UninitializedParameter(dtype=numbagrad.float64)
    assert repr(p) == "<UninitializedParameter>"
    assert p.dtype == numbagrad.float64 and p.requires_grad
    with pytest.raises(ValueError, match="uninitialized parameter"):
        p * 2
    with pytest.raises(ValueError, match="uninitialized parameter"):
        p.sum()
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        _ = p.shape
    b = nn.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize((2, 3), dtype=numbagrad.float64)
    assert type(b) is numbagrad.Tensor and b.shape == (2, 3) and b.dtype == numbagrad.float64
    assert nn.parameter.is_lazy(nn.LazyConv2d(2, 3).weight)
    assert not nn.parameter.is_lazy(nn.Conv2d(1, 2, 3).weight)


def test_lazy_load_state_dict_copy_and_errors():
    lin = nn.LazyLinear(3)
    src = nn.Linear(5, 3)
    lin.load_state_dict(src.state_dict())
    assert type(lin) is nn.LazyLinear  # as PyTorch: it becomes Linear at the first call
    assert numbagrad.equal(lin.weight, src.weight)
    lin(numbagrad.randn(2, 5))
    assert type(lin) is nn.Linear
    c = copy.deepcopy(nn.LazyConv1d(2, 3))
    assert c.has_uninitialized_params() and repr(c.weight) == "<UninitializedParameter>"
    c = pickle.loads(pickle.dumps(nn.LazyLinear(2)))
    assert c(numbagrad.randn(1, 3)).shape == (1, 2)
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D"):
        nn.LazyConv2d(4, 3)(numbagrad.randn(5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(numbagrad.randn(1, 3, 5))
    # nothing to infer: it becomes a BatchNorm1d of 0 features, as PyTorch's does
    bn = nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert not bn.has_uninitialized_params()
    bn(numbagrad.randn(4, 3))
    assert type(bn) is nn.BatchNorm1d and bn.weight is None and bn.num_features == 0


@pytest.mark.parametrize(
    "kw",
    [
        {"in_features": 8, "n_classes": 10, "cutoffs": [4, 7]},
        {"in_features": 16, "n_classes": 20, "cutoffs": [3, 9, 15], "div_value": 2.0,
         "head_bias": True},
    ],
)  # fmt: skip
def test_adaptive_log_softmax_against_torch(kw):
    torch = _torch()
    ours = nn.AdaptiveLogSoftmaxWithLoss(**kw).double()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(**kw).double()
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: _t(v, torch) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((7, kw["in_features"])), rng.integers(0, kw["n_classes"], 7)
    a = theirs(torch.tensor(x), torch.tensor(t))
    b = ours(numbagrad.tensor(x), numbagrad.tensor(t))
    np.testing.assert_allclose(b.output.detach().numpy(), a.output.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(float(b.loss), a.loss.item(), atol=1e-12)
    a.loss.backward()
    b.loss.backward()
    for (name, p), (_, q) in zip(theirs.named_parameters(), ours.named_parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), atol=1e-12, err_msg=name)
    np.testing.assert_allclose(
        ours.log_prob(numbagrad.tensor(x)).detach().numpy(),
        theirs.log_prob(torch.tensor(x)).detach().numpy(),
        atol=1e-12,
    )
    assert ours.predict(numbagrad.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()
    single = ours(numbagrad.tensor(x[0]), numbagrad.tensor(t[0]))
    assert single.output.shape == () and single.loss.shape == ()
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(numbagrad.tensor(x), numbagrad.tensor(np.full(7, 99)))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs=[5, 3])


def test_sync_batch_norm_and_container():
    torch = _torch()
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Sequential(nn.BatchNorm2d(2)))
    bn = net[1]
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(conv[1]) is nn.SyncBatchNorm and type(conv[2][0]) is nn.SyncBatchNorm
    assert conv[1].weight is bn.weight and conv[1].running_mean is bn.running_mean
    assert repr(conv[1]) == repr(torch.nn.SyncBatchNorm(4))
    x = np.random.default_rng(0).standard_normal((6, 4, 3))
    ours, theirs = nn.SyncBatchNorm(4).double(), torch.nn.SyncBatchNorm(4).double()
    for _ in range(2):
        a = ours(numbagrad.tensor(x))
        b = theirs(torch.tensor(x))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="at least 2D"):
        ours(numbagrad.zeros(3, dtype=numbagrad.float64))
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = nn.Container(fc=nn.Linear(2, 2))
    assert [n for n, _ in c.named_children()] == ["fc"]
