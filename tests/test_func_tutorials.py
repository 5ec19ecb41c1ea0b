"""PyTorch's official ``torch.func`` tutorials, ported as differential tests.

Each tutorial's code is written once as a function of the module (``torch`` or
``numbagrad``), the way a user runs it with ``import numbagrad as torch``. Inputs come from a
seeded NumPy generator; models are built by ``torch`` (seeded) and their ``state_dict`` is
copied into the ``numbagrad`` model. Both runs must agree (float64 to ``rtol=1e-6``, float32
to ``rtol=1e-4``). The tutorials:

1. "Jacobians, Hessians, hvp, vhp, and more: composing function transforms";
2. "Per-sample-gradients";
3. "Model ensembling";
4. "Neural Tangent Kernels";
5. ``functional_call`` with tied weights and buffers, ``grad(..., has_aux=True)`` in a
   training loop.

The tutorials' CNNs are replaced by MLPs of the same layer structure, and the buffers of
section 5 by a hand-written normalisation layer (these tests predate ``nn.Conv2d``,
``F.max_pool2d`` and ``nn.BatchNorm*``; ``test_nn_conv.py`` runs per-example gradients of a
CNN through ``vmap``).
"""

import copy
import functools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _diff import to_np as _to_np  # noqa: E402

import numbagrad  # noqa: E402

pytestmark = pytest.mark.transforms

DTYPES = ["float64", "float32"]
TOL = {"float64": {"rtol": 1e-6, "atol": 1e-9}, "float32": {"rtol": 1e-4, "atol": 1e-5}}


# -- the harness (tree conversion: _diff.py) -----------------------------------------------
def _close(ref, got, dtype, path="out"):
    """``ref`` (torch) and ``got`` (numbagrad) are equal trees of close arrays."""
    ref, got = _to_np(ref), _to_np(got)
    _close_np(ref, got, dtype, path)


def _close_np(ref, got, dtype, path):
    if isinstance(ref, dict):
        assert isinstance(got, dict), path
        assert list(ref) == list(got), f"{path}: keys {list(ref)} != {list(got)}"
        for k in ref:
            _close_np(ref[k], got[k], dtype, f"{path}[{k!r}]")
    elif isinstance(ref, list):
        assert isinstance(got, list) and len(ref) == len(got), path
        for i, (r, g) in enumerate(zip(ref, got)):
            _close_np(r, g, dtype, f"{path}[{i}]")
    elif isinstance(ref, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: {type(got)}"
        assert ref.shape == got.shape, f"{path}: shape {ref.shape} != {got.shape}"
        assert str(ref.dtype) == str(got.dtype), f"{path}: dtype {ref.dtype} != {got.dtype}"
        np.testing.assert_allclose(got, ref, err_msg=path, **TOL[dtype])
    else:
        assert ref == got, f"{path}: {ref!r} != {got!r}"


def _rand(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _T(mod, arr, dtype):
    return mod.tensor(np.asarray(arr), dtype=getattr(mod, dtype))


def _both(dtype, arrays):
    """The same inputs as (torch tensors, numbagrad tensors)."""
    return [_T(torch, a, dtype) for a in arrays], [_T(numbagrad, a, dtype) for a in arrays]


def _port(tmodel, nmodel):
    """Copy the torch model's parameters and buffers into the numbagrad model."""
    sd = {k: numbagrad.tensor(v.detach().numpy().copy()) for k, v in tmodel.state_dict().items()}
    nmodel.load_state_dict(sd)
    nmodel.train(tmodel.training)
    return nmodel


def _pair(build, dtype, seed=0):
    torch.manual_seed(seed)
    tm = build(torch).to(getattr(torch, dtype))
    nm = build(numbagrad).to(getattr(numbagrad, dtype))
    return tm, _port(tm, nm)


@functools.cache
def _classes(mod):
    """The tutorials' models, for ``mod`` (classes made once, so ``stack_module_state`` sees
    models of one class)."""
    nn, F = mod.nn, mod.nn.functional

    class SimpleCNN(nn.Module):
        """Per-sample-gradients' SimpleCNN with conv1/conv2/max_pool2d replaced by Linear."""

        def __init__(self, din=64):
            super().__init__()
            self.conv1 = nn.Linear(din, 32)
            self.conv2 = nn.Linear(32, 24)
            self.fc1 = nn.Linear(24, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = mod.flatten(x, 1)
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    class SimpleMLP(nn.Module):
        """Model ensembling's SimpleMLP (784 -> 128 -> 128 -> 10, here 64 -> 32 -> 32 -> 10),
        with an optional dropout for the ``randomness`` section."""

        def __init__(self, din=64, p=0.0):
            super().__init__()
            self.fc1 = nn.Linear(din, 32)
            self.fc2 = nn.Linear(32, 32)
            self.fc3 = nn.Linear(32, 10)
            self.p = p

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            if self.p:
                x = F.dropout(x, self.p, training=self.training)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    class NTKNet(nn.Module):
        """The NTK tutorial's CNN (conv1-relu-conv2-relu-conv3-flatten-fc) as an MLP."""

        def __init__(self, din=48):
            super().__init__()
            self.conv1 = nn.Linear(din, 32)
            self.conv2 = nn.Linear(32, 32)
            self.conv3 = nn.Linear(32, 16)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.conv1(x)
            x = x.relu()
            x = self.conv2(x)
            x = x.relu()
            x = self.conv3(x)
            x = self.fc(x)
            return x

    class Normalize(nn.Module):
        """A BatchNorm1d stand-in: running statistics as buffers, updated in place in
        training mode, used in eval mode."""

        def __init__(self, n, momentum=0.1):
            super().__init__()
            self.register_buffer("running_mean", mod.zeros(n))
            self.register_buffer("running_var", mod.ones(n))
            self.register_buffer("num_batches_tracked", mod.tensor(0))
            self.momentum = momentum

        def forward(self, x):
            if self.training:
                mean, var = x.mean(0), x.var(0, unbiased=False)
                with mod.no_grad():
                    self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                    self.running_var.mul_(1 - self.momentum).add_(self.momentum * var)
                    self.num_batches_tracked.add_(1)
            else:
                mean, var = self.running_mean, self.running_var
            return (x - mean) / (var + 1e-5).sqrt()

    class TiedAutoencoder(nn.Module):
        """Encoder and decoder sharing one weight (``decoder.weight is encoder.weight``)."""

        def __init__(self, n=6, k=4):
            super().__init__()
            self.encoder = nn.Linear(n, k, bias=False)
            self.norm = Normalize(k)
            self.decoder = nn.Linear(k, n, bias=False)
            self.decoder.weight = self.encoder.weight  # tied: shape (k, n), used transposed

        def forward(self, x):
            h = self.norm(self.encoder(x)).tanh()
            return F.linear(h, self.decoder.weight.t())

    return {
        "SimpleCNN": SimpleCNN,
        "SimpleMLP": SimpleMLP,
        "NTKNet": NTKNet,
        "Normalize": Normalize,
        "TiedAutoencoder": TiedAutoencoder,
    }


# =========================================================================================
# 1. Jacobians, Hessians, hvp, vhp, and more: composing function transforms
# =========================================================================================
def _predict(mod):
    F = mod.nn.functional

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    return predict


def _tut_jacobian(mod, weight, bias, x):
    """The "Computing the Jacobian" section: the autograd loop, vmap(vjp), jacrev."""
    from functools import partial

    func = mod.func
    predict = _predict(mod)
    D = x.shape[0]

    def compute_jac(xp):
        jacobian_rows = [
            mod.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors
        ]
        return mod.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = mod.eye(D, dtype=x.dtype)
    jacobian = compute_jac(xp)

    _, vjp_fn = func.vjp(partial(predict, weight, bias), x)
    (ft_jacobian,) = func.vmap(vjp_fn)(unit_vectors)

    ft_jacrev = func.jacrev(predict, argnums=2)(weight, bias, x)
    ft_jac_weight, ft_jac_bias = func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    ft_jacfwd = func.jacfwd(predict, argnums=2)(weight, bias, x)
    fwd_weight, fwd_bias = func.jacfwd(predict, argnums=(0, 1))(weight, bias, x)
    return {
        "loop": jacobian,
        "vmap_vjp": ft_jacobian,
        "jacrev": ft_jacrev,
        "jacrev_w": ft_jac_weight,
        "jacrev_b": ft_jac_bias,
        "jacfwd": ft_jacfwd,
        "jacfwd_w": fwd_weight,
        "jacfwd_b": fwd_bias,
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_jacobian_section(dtype):
    D = 16
    (tw, tb, tx), (nw, nb, nx) = _both(dtype, [_rand(1, D, D), _rand(2, D), _rand(3, D)])
    ref = _tut_jacobian(torch, tw, tb, tx)
    got = _tut_jacobian(numbagrad, nw, nb, nx)
    _close(ref, got, dtype)
    # the tutorial's asserts, on numbagrad's own results
    for k in ("vmap_vjp", "jacrev", "jacfwd"):
        assert numbagrad.allclose(got["loop"], got[k]), k
    assert tuple(got["jacrev_w"].shape) == (D, D, D)
    assert tuple(got["jacrev_b"].shape) == (D, D)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("Din", "Dout"), [(8, 256), (256, 8)])
def test_jacrev_vs_jacfwd_section(dtype, Din, Dout):
    """ "Reverse-mode Jacobian (jacrev) vs forward-mode Jacobian (jacfwd)": the tall and the
    wide Jacobian (the tutorial's 32 x 2048, smaller)."""

    def run(mod, weight, bias, x):
        predict = _predict(mod)
        return [
            mod.func.jacfwd(predict, argnums=2)(weight, bias, x),
            mod.func.jacrev(predict, argnums=2)(weight, bias, x),
        ]

    t, n = _both(dtype, [_rand(4, Dout, Din), _rand(5, Dout), _rand(6, Din)])
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)
    assert numbagrad.allclose(got[0], got[1], rtol=TOL[dtype]["rtol"], atol=TOL[dtype]["atol"])


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian_section(dtype):
    """ "Hessian computation with functorch.hessian" (Din=512, Dout=32 there; smaller here)."""

    def run(mod, weight, bias, x):
        func = mod.func
        predict = _predict(mod)
        return {
            "hess_api": func.hessian(predict, argnums=2)(weight, bias, x),
            "hess_fwdfwd": func.jacfwd(func.jacfwd(predict, argnums=2), argnums=2)(weight, bias, x),
            "hess_revrev": func.jacrev(func.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
            "hess_fwdrev": func.jacfwd(func.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
            "hess_revfwd": func.jacrev(func.jacfwd(predict, argnums=2), argnums=2)(weight, bias, x),
            "hess_wb": func.hessian(predict, argnums=(0, 1))(weight, bias, x),
        }

    Din, Dout = 24, 6
    t, n = _both(dtype, [_rand(7, Dout, Din), _rand(8, Dout), _rand(9, Din)])
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)
    assert tuple(got["hess_api"].shape) == (Dout, Din, Din)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_jacobian_and_batch_hessian_section(dtype):
    """ "Batch Jacobian and Batch Hessian": vmap(jacrev) with in_dims=(None, None, 0), the
    sum trick, vmap(hessian)."""

    def run(mod, weight, bias, x):
        func = mod.func
        predict = _predict(mod)
        compute_batch_jacobian = func.vmap(func.jacrev(predict, argnums=2), in_dims=(None, None, 0))
        batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

        def predict_with_output_summed(weight, bias, x):
            return predict(weight, bias, x).sum(0)

        batch_jacobian1 = func.jacrev(predict_with_output_summed, argnums=2)(
            weight, bias, x
        ).movedim(1, 0)
        batch_jacobian2 = func.jacrev(lambda x: predict(weight, bias, x).sum(0))(x).movedim(1, 0)
        batch_jacfwd = func.vmap(func.jacfwd(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, x
        )
        compute_batch_hessian = func.vmap(func.hessian(predict, argnums=2), in_dims=(None, None, 0))
        batch_hess = compute_batch_hessian(weight, bias, x)
        return {
            "batch_jacobian0": batch_jacobian0,
            "batch_jacobian1": batch_jacobian1,
            "batch_jacobian2": batch_jacobian2,
            "batch_jacfwd": batch_jacfwd,
            "batch_hess": batch_hess,
        }

    batch_size, Din, Dout = 64, 31, 33
    t, n = _both(dtype, [_rand(10, Dout, Din), _rand(11, Dout), _rand(12, batch_size, Din)])
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)
    tol = TOL[dtype]
    for k in ("batch_jacobian1", "batch_jacobian2", "batch_jacfwd"):
        assert numbagrad.allclose(got["batch_jacobian0"], got[k], **tol), k
    assert tuple(got["batch_hess"].shape) == (batch_size, Dout, Din, Din)


def _hvp_fns(mod):
    func = mod.func

    def hvp(f, primals, tangents):
        return func.jvp(func.grad(f), primals, tangents)[1]

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = func.vjp(func.grad(f), *primals)
        return vjp_fn(*tangents)

    return hvp, hvp_revrev


@pytest.mark.parametrize("dtype", DTYPES)
def test_hvp_section(dtype):
    """ "Computing Hessian-vector products": jvp(grad(f)) and vjp(grad(f)), against the
    materialised Hessian and torch.autograd.functional.hvp/vhp."""

    def run(mod, x, tangent):
        hvp, hvp_revrev = _hvp_fns(mod)
        AF = mod.autograd.functional

        def f(x):
            return x.sin().sum()

        def g(x):  # a Hessian that is not diagonal
            return x.sin().sum() * (x * x).cos().sum()

        out = {}
        for name, fn in (("f", f), ("g", g)):
            result = hvp(fn, (x,), (tangent,))
            (result_hvp_revrev,) = hvp_revrev(fn, (x,), (tangent,))
            H = mod.func.hessian(fn)(x)
            val_h, af_hvp = AF.hvp(fn, x, tangent)
            val_v, af_vhp = AF.vhp(fn, x, tangent)
            out[name] = {
                "hvp": result,
                "hvp_revrev": result_hvp_revrev,
                "H@v": H @ tangent,
                "af_hvp": af_hvp,
                "af_vhp": af_vhp,
                "af_val": [val_h, val_v],
                "af_hessian": AF.hessian(fn, x),
            }
        return out

    n = 2048
    t, g = _both(dtype, [_rand(13, n), _rand(14, n)])
    # the full Hessian is n x n: materialise it for a slice only
    t = [a[:256] for a in t]
    g = [a[:256] for a in g]
    ref, got = run(torch, *t), run(numbagrad, *g)
    _close(ref, got, dtype)
    tol = TOL[dtype]
    for fn in ("f", "g"):
        for k in ("hvp_revrev", "H@v", "af_hvp", "af_vhp"):
            assert numbagrad.allclose(got[fn]["hvp"], got[fn][k], **tol), (fn, k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hvp_full_size(dtype):
    """The tutorial's sizes (2048) for jvp(grad(f)), without the Hessian."""

    def run(mod, x, tangent):
        hvp, hvp_revrev = _hvp_fns(mod)

        def f(x):
            return x.sin().sum()

        return [hvp(f, (x,), (tangent,)), hvp_revrev(f, (x,), (tangent,))]

    t, n = _both(dtype, [_rand(15, 2048), _rand(16, 2048)])
    _close(run(torch, *t), run(numbagrad, *n), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jacobian_options(dtype):
    """jacrev/jacfwd options around the tutorial's predict: has_aux, chunk_size, dict
    inputs and outputs, vmap chunk_size/out_dims, linearize."""

    def run(mod, w, b, x):
        func = mod.func
        predict = _predict(mod)
        return {
            "jacrev_aux": func.jacrev(lambda x: (predict(w, b, x), x.sum()), has_aux=True)(x[0]),
            "jacfwd_aux": func.jacfwd(lambda x: (predict(w, b, x), {"s": x.sum()}), has_aux=True)(
                x[0]
            ),
            "jacrev_chunk": func.jacrev(predict, argnums=(0, 2), chunk_size=2)(w, b, x[0]),
            "vmap_chunk": func.vmap(
                func.jacrev(predict, argnums=2), in_dims=(None, None, 0), chunk_size=2
            )(w, b, x),
            "vmap_out_dims": func.vmap(
                func.jacrev(predict, argnums=2), in_dims=(None, None, 0), out_dims=1
            )(w, b, x),
            "hessian_dict": func.hessian(lambda p: predict(p["w"], p["b"], x[0]).sum())(
                {"w": w, "b": b}
            ),
            "jacrev_dict_out": func.jacrev(lambda x: {"y": predict(w, b, x), "z": x.sin()})(x[0]),
            "linearize": func.linearize(lambda x: predict(w, b, x), x[0])[1](x[1]),
        }

    t, n = _both(dtype, [_rand(40, 5, 4), _rand(41, 5), _rand(42, 3, 4)])
    _close(run(torch, *t), run(numbagrad, *n), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_autograd_functional_on_predict(dtype):
    """torch.autograd.functional.jacobian/hessian/hvp/vhp on the tutorial's predict."""

    def run(mod, weight, bias, x, v):
        AF = mod.autograd.functional
        predict = _predict(mod)

        def scalar(weight, bias, x):
            return predict(weight, bias, x).pow(2).sum()

        out = {
            "jac_x": AF.jacobian(lambda x: predict(weight, bias, x), x),
            "jac_all": AF.jacobian(predict, (weight, bias, x)),
            "jac_vec": AF.jacobian(predict, (weight, bias, x), vectorize=True),
            "jac_fwd": AF.jacobian(
                predict, (weight, bias, x), vectorize=True, strategy="forward-mode"
            ),
            "hess_x": AF.hessian(lambda x: scalar(weight, bias, x), x),
            "hess_all": AF.hessian(scalar, (weight, bias, x)),
            "hvp": AF.hvp(lambda x: scalar(weight, bias, x), x, v),
            "vhp": AF.vhp(lambda x: scalar(weight, bias, x), x, v),
            "func_hess": mod.func.hessian(scalar, argnums=2)(weight, bias, x),
            "func_jac": mod.func.jacrev(predict, argnums=(0, 1, 2))(weight, bias, x),
        }
        return out

    D = 5
    t, n = _both(dtype, [_rand(17, D, D), _rand(18, D), _rand(19, D), _rand(20, D)])
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)


# =========================================================================================
# 2. Per-sample-gradients
# =========================================================================================
def _loss_fn(mod):
    F = mod.nn.functional

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    return loss_fn


def _tut_per_sample(mod, model, data, targets):
    func = mod.func
    loss_fn = _loss_fn(mod)
    batch_size = data.shape[0]

    # the batch loss and its gradients
    predictions = model(data)
    loss = loss_fn(predictions, targets)
    loss.backward()
    batch_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return mod.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """manually process each sample with per sample gradient"""
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [mod.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = func.functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = func.grad(compute_loss)
    ft_compute_sample_grad = func.vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    return {
        "batch_loss": loss.detach(),
        "batch_grads": batch_grads,
        "per_sample_grads": per_sample_grads,
        "ft_per_sample_grads": ft_per_sample_grads,
    }


def _data(mod, dtype, batch_size=32, seed=21, shape=(1, 8, 8)):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((batch_size, *shape))
    targets = rng.integers(0, 10, size=batch_size)
    return _T(mod, data, dtype), mod.tensor(targets)


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_sample_grads_tutorial(dtype):
    tm, nm = _pair(lambda mod: _classes(mod)["SimpleCNN"](), dtype)
    ref = _tut_per_sample(torch, tm, *_data(torch, dtype))
    got = _tut_per_sample(numbagrad, nm, *_data(numbagrad, dtype))
    _close(ref, got, dtype)
    # the tutorial's check, on numbagrad's own results
    tol = TOL[dtype]
    for per_sample_grad, ft_per_sample_grad in zip(
        got["per_sample_grads"], got["ft_per_sample_grads"].values()
    ):
        assert numbagrad.allclose(per_sample_grad, ft_per_sample_grad, **tol)
    # nll_loss averages: the per-sample gradients average to the batch gradient
    for bg, psg in zip(got["batch_grads"], got["ft_per_sample_grads"].values()):
        assert numbagrad.allclose(bg, psg.mean(0), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_sample_grads_vs_backward_loop(dtype):
    """vmap(grad(compute_loss)) against a loop of ``.backward()`` calls, with
    cross_entropy on raw logits (the tutorial's other loss)."""

    def run(mod, model, data, targets):
        F, func = mod.nn.functional, mod.func
        loop = {k: [] for k, _ in model.named_parameters()}
        for i in range(data.shape[0]):
            model.zero_grad()
            out = model(data[i].unsqueeze(0))
            F.cross_entropy(out, targets[i].unsqueeze(0)).backward()
            for k, p in model.named_parameters():
                loop[k].append(p.grad.clone())
        loop = {k: mod.stack(v) for k, v in loop.items()}

        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            out = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return F.cross_entropy(out, target.unsqueeze(0))

        ft = func.vmap(func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, data, targets
        )
        return {"loop": loop, "vmap": ft}

    tm, nm = _pair(lambda mod: _classes(mod)["SimpleMLP"](), dtype)
    ref = run(torch, tm, *_data(torch, dtype, 16, seed=22))
    got = run(numbagrad, nm, *_data(numbagrad, dtype, 16, seed=22))
    _close(ref, got, dtype)
    for k in got["loop"]:
        assert numbagrad.allclose(got["loop"][k], got["vmap"][k], **TOL[dtype]), k


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_sample_grads_with_grad_argnums_and_value(dtype):
    """Variants users write from the tutorial: grad_and_value, per-sample gradients with
    respect to the input (argnums=2) too."""

    def run(mod, model, data, targets):
        func = mod.func
        loss_fn = _loss_fn(mod)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            predictions = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return loss_fn(predictions, target.unsqueeze(0))

        (gp, gx), loss = func.vmap(
            func.grad_and_value(compute_loss, argnums=(0, 2)), in_dims=(None, None, 0, 0)
        )(params, buffers, data, targets)
        return {"grad_params": gp, "grad_input": gx, "loss": loss}

    tm, nm = _pair(lambda mod: _classes(mod)["SimpleCNN"](), dtype)
    ref = run(torch, tm, *_data(torch, dtype, 8, seed=23))
    got = run(numbagrad, nm, *_data(numbagrad, dtype, 8, seed=23))
    _close(ref, got, dtype)


# =========================================================================================
# 3. Model ensembling
# =========================================================================================
NUM_MODELS = 10


def _ensemble(dtype, p=0.0, train=False):
    """num_models torch models and their numbagrad copies."""
    torch.manual_seed(0)
    tmodels, nmodels = [], []
    for _ in range(NUM_MODELS):
        tm = _classes(torch)["SimpleMLP"](p=p).to(getattr(torch, dtype))
        nm = _classes(numbagrad)["SimpleMLP"](p=p).to(getattr(numbagrad, dtype))
        tm.train(train)
        tmodels.append(tm)
        nmodels.append(_port(tm, nm))
    return tmodels, nmodels


def _tut_ensemble(mod, models, data):
    func = mod.func
    minibatches = data[:NUM_MODELS]
    predictions_diff_minibatch_loop = [
        model(minibatch) for model, minibatch in zip(models, minibatches)
    ]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    params, buffers = func.stack_module_state(models)
    base_model = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return func.functional_call(base_model, (params, buffers), (x,))

    sizes = [p.size(0) for p in params.values()]
    predictions1_vmap = mod.vmap(fmodel)(params, buffers, minibatches)
    predictions1_vmap_000 = func.vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, minibatches)
    predictions2_vmap = mod.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    return {
        "sizes": sizes,
        "requires_grad": [p.requires_grad for p in params.values()],
        "loop1": mod.stack(predictions_diff_minibatch_loop),
        "vmap1": predictions1_vmap,
        "vmap1_000": predictions1_vmap_000,
        "loop2": mod.stack(predictions2),
        "vmap2": predictions2_vmap,
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_model_ensembling_tutorial(dtype):
    tmodels, nmodels = _ensemble(dtype)
    arr = _rand(24, 12, 16, 1, 8, 8)  # (100, 64, 1, 28, 28) in the tutorial
    ref = _tut_ensemble(torch, tmodels, _T(torch, arr, dtype))
    got = _tut_ensemble(numbagrad, nmodels, _T(numbagrad, arr, dtype))
    _close(ref, got, dtype)
    assert got["sizes"] == [NUM_MODELS] * 6
    tol = TOL[dtype]
    assert numbagrad.allclose(got["vmap1"], got["loop1"], **tol)
    assert numbagrad.allclose(got["vmap2"], got["loop2"], **tol)


def test_model_ensembling_base_model_on_meta_device():
    """The tutorial moves a copy of a model to the 'meta' device as the stateless base:
    functional_call then runs it on the stacked (CPU) parameters of the models."""
    models = [_classes(numbagrad)["SimpleMLP"]() for _ in range(2)]
    params, buffers = numbagrad.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    out = numbagrad.vmap(
        lambda p, b, x: numbagrad.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None)
    )(params, buffers, numbagrad.ones(3, 64))
    assert tuple(out.shape) == (2, 3, 10)
    want = numbagrad.stack([m(numbagrad.ones(3, 64)) for m in models])
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_model_ensembling_training_step(dtype):
    """Training the ensemble: per-model gradients of the stacked parameters via
    vmap(grad(loss)), and backward through vmap into the stacked leaves."""

    def run(mod, models, data, targets):
        func, F = mod.func, mod.nn.functional
        params, buffers = func.stack_module_state(models)
        base_model = copy.deepcopy(models[0])

        def loss(params, buffers, x, y):
            out = func.functional_call(base_model, (params, buffers), (x,))
            return F.cross_entropy(out, y)

        grads = func.vmap(func.grad(loss), in_dims=(0, 0, 0, None))(params, buffers, data, targets)
        total = func.vmap(loss, in_dims=(0, 0, 0, None))(params, buffers, data, targets).sum()
        total.backward()
        return {"vmap_grad": grads, "backward": {k: p.grad for k, p in params.items()}}

    tmodels, nmodels = _ensemble(dtype)
    arr = _rand(25, NUM_MODELS, 16, 64)
    y = np.random.default_rng(26).integers(0, 10, size=16)
    ref = run(torch, tmodels, _T(torch, arr, dtype), torch.tensor(y))
    got = run(numbagrad, nmodels, _T(numbagrad, arr, dtype), numbagrad.tensor(y))
    _close(ref, got, dtype)


def test_model_ensembling_randomness_error():
    """Dropout under vmap with the default randomness='error' raises, in both."""

    def run(mod, models, x, **kw):
        func = mod.func
        params, buffers = func.stack_module_state(models)
        base_model = copy.deepcopy(models[0])

        def fmodel(params, buffers, x):
            return func.functional_call(base_model, (params, buffers), (x,))

        return func.vmap(fmodel, in_dims=(0, 0, None), **kw)(params, buffers, x)

    tmodels, nmodels = _ensemble("float64", p=0.5, train=True)
    x = _rand(27, 4, 64)
    with pytest.raises(RuntimeError) as te:
        run(torch, tmodels, _T(torch, x, "float64"))
    with pytest.raises(RuntimeError) as ne:
        run(numbagrad, nmodels, _T(numbagrad, x, "float64"))
    assert "randomness" in str(te.value) and "randomness" in str(ne.value)
    # in eval mode dropout draws nothing: no error, the same results
    for m in tmodels + nmodels:
        m.eval()
    _close(
        run(torch, tmodels, _T(torch, x, "float64")),
        run(numbagrad, nmodels, _T(numbagrad, x, "float64")),
        "float64",
    )


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_model_ensembling_randomness_same_different(randomness):
    """With identical models and shared data: 'same' gives identical members (one dropout
    mask), 'different' gives different ones; in_dims=(0, 0, 0) with equal minibatches too."""

    def run(mod, in_dims):
        func = mod.func
        mod.manual_seed(0)
        one = _classes(mod)["SimpleMLP"](p=0.5).to(mod.float64)
        models = [copy.deepcopy(one) for _ in range(4)]
        params, buffers = func.stack_module_state(models)

        def fmodel(params, buffers, x):
            return func.functional_call(one, (params, buffers), (x,))

        x = _T(mod, _rand(28, 3, 64), "float64")
        if in_dims[2] == 0:
            x = x.expand(4, 3, 64)
        out = func.vmap(fmodel, in_dims=in_dims, randomness=randomness)(params, buffers, x)
        # dropout draws a fresh mask on every call: the batch members are compared
        return [bool(mod.equal(out[0], out[i])) for i in range(1, 4)]

    for in_dims in [(0, 0, None), (0, 0, 0)]:
        ref, got = run(torch, in_dims), run(numbagrad, in_dims)
        assert ref == got == [randomness == "same"] * 3, in_dims


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_dropout_randomness_mask_pattern(randomness):
    """F.dropout under vmap: one mask per call ('same') or per batch member ('different'),
    kept entries scaled by 1/(1-p)."""

    def run(mod):
        F = mod.nn.functional
        x = mod.ones(8, 200, dtype=mod.float64)
        out = mod.func.vmap(lambda r: F.dropout(r, 0.5, training=True), randomness=randomness)(x)
        vals = sorted(set(np.unique(_to_np(out)).tolist()))
        same_rows = [bool(mod.equal(out[0], out[i])) for i in range(1, 8)]
        return vals, same_rows

    ref, got = run(torch), run(numbagrad)
    assert ref == got
    assert got[0] == [0.0, 2.0]


# =========================================================================================
# 4. Neural Tangent Kernels
# =========================================================================================
def _ntk_fns(mod, net):
    func = mod.func

    def fnet_single(params, x):
        return func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
        # Compute J(x1)
        jac1 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]

        # Compute J(x2)
        jac2 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]

        # Compute J(x1) @ J(x2).T
        einsum_expr = None
        if compute == "full":
            einsum_expr = "Naf,Mbf->NMab"
        elif compute == "trace":
            einsum_expr = "Naf,Maf->NM"
        elif compute == "diagonal":
            einsum_expr = "Naf,Maf->NMa"
        else:
            raise AssertionError

        result = mod.stack([mod.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
        result = result.sum(0)
        return result

    def empirical_ntk_ntk_vps(func_, params, x1, x2, compute="full"):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func_(params, x1)

            def func_x2(params):
                return func_(params, x2)

            output, vjp_fn = func.vjp(func_x1, params)

            def get_ntk_slice(vec):
                # This computes ``vec @ J(x2).T``
                # `vec` is some unit vector (a single slice of the Identity matrix)
                vjps = vjp_fn(vec)
                # This computes ``J(X1) @ vjps``
                _, jvps = func.jvp(func_x2, (params,), vjps)
                return jvps

            # Here's our identity matrix
            basis = mod.eye(output.numel(), dtype=output.dtype, device=output.device).view(
                output.numel(), -1
            )
            return func.vmap(get_ntk_slice)(basis)

        # ``get_ntk(x1, x2)`` computes the NTK for a single data point x1, x2
        # Since the x1, x2 inputs to ``empirical_ntk_ntk_vps`` are batched,
        # we actually wish to compute the NTK between every pair of data points
        # between {x1} and {x2}. That's what the ``vmaps`` here do.
        result = func.vmap(func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

        if compute == "full":
            return result
        if compute == "trace":
            return mod.einsum("NMKK->NM", result)
        if compute == "diagonal":
            return mod.einsum("NMKK->NMK", result)
        raise AssertionError

    return fnet_single, empirical_ntk_jacobian_contraction, empirical_ntk_ntk_vps


def _ntk_setup(dtype, n_train=20, n_test=5):
    tnet, nnet = _pair(lambda mod: _classes(mod)["NTKNet"](), dtype)
    # (20, 3, 32, 32) and (5, 3, 32, 32) images in the tutorial
    (ttr, tte), (ntr, nte) = _both(dtype, [_rand(29, n_train, 3, 4, 4), _rand(30, n_test, 3, 4, 4)])
    return (tnet, ttr, tte), (nnet, ntr, nte)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ntk_jacobian_contraction(dtype):
    def run(mod, net, x_train, x_test):
        fnet_single, contraction, _ = _ntk_fns(mod, net)
        params = {k: v.detach() for k, v in net.named_parameters()}
        return {
            c: contraction(fnet_single, params, x_train, x_test, c)
            for c in ("full", "trace", "diagonal")
        }

    t, n = _ntk_setup(dtype)
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)
    assert tuple(got["full"].shape) == (20, 5, 10, 10)
    assert tuple(got["trace"].shape) == (20, 5)
    assert tuple(got["diagonal"].shape) == (20, 5, 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ntk_ntk_vps(dtype):
    def run(mod, net, x_train, x_test):
        fnet_single, contraction, ntk_vps = _ntk_fns(mod, net)
        params = {k: v.detach() for k, v in net.named_parameters()}
        out = {}
        for c in ("full", "trace", "diagonal"):
            out[c] = ntk_vps(fnet_single, params, x_test, x_train, c)
            out["jc_" + c] = contraction(fnet_single, params, x_test, x_train, c)
        return out

    t, n = _ntk_setup(dtype)
    ref, got = run(torch, *t), run(numbagrad, *n)
    _close(ref, got, dtype)
    # the tutorial's assert: both methods agree
    for c in ("full", "trace", "diagonal"):
        assert numbagrad.allclose(got[c], got["jc_" + c], **TOL[dtype]), c


# =========================================================================================
# 5. functional_call with tied weights and buffers; grad(has_aux=True) in a training loop
# =========================================================================================
def _tied_pair(dtype):
    return _pair(lambda mod: _classes(mod)["TiedAutoencoder"](), dtype, seed=3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_call_tied_weights(dtype):
    def run(mod, model, x, w):
        func = mod.func
        model.eval()
        names = [k for k, _ in model.named_parameters()]
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        out = {
            "names": names,
            "buffer_names": list(buffers),
            "plain": model(x),
            # tie_weights=True: the decoder takes the encoder's replacement
            "tied": func.functional_call(model, {"encoder.weight": w}, (x,)),
            "tied_dec": func.functional_call(model, {"decoder.weight": w}, (x,)),
            # tie_weights=False: only the named slot is replaced
            "untied": func.functional_call(model, {"encoder.weight": w}, (x,), tie_weights=False),
            "both_same": func.functional_call(
                model, {"encoder.weight": w, "decoder.weight": w}, (x,)
            ),
            "both_untied": func.functional_call(
                model, {"encoder.weight": w, "decoder.weight": 2 * w}, (x,), tie_weights=False
            ),
        }
        try:
            func.functional_call(model, {"encoder.weight": w, "decoder.weight": 2 * w}, (x,))
            out["tied_conflict"] = "no error"
        except ValueError:
            out["tied_conflict"] = "ValueError"

        # grad through the tied parameter accumulates both uses
        def loss(params, buffers, x):
            return func.functional_call(model, (params, buffers), (x,)).pow(2).sum()

        params = {k: v.detach() for k, v in model.named_parameters()}
        out["grad"] = func.grad(loss)(params, buffers, x)
        out["grad_untied"] = func.grad(
            lambda p, b, x: (
                func.functional_call(model, (p, b), (x,), tie_weights=False).pow(2).sum()
            )
        )({"encoder.weight": w, "decoder.weight": w}, buffers, x)
        out["state_after"] = {k: v for k, v in model.state_dict().items()}
        return out

    tm, nm = _tied_pair(dtype)
    # eval-mode statistics that are not the defaults
    with torch.no_grad():
        tm.norm.running_mean.copy_(torch.tensor(_rand(31, 4)))
        tm.norm.running_var.copy_(torch.tensor(_rand(32, 4)).abs() + 0.5)
    _port(tm, nm)
    x, w = _rand(33, 5, 6), _rand(34, 4, 6)
    ref = run(torch, tm, _T(torch, x, dtype), _T(torch, w, dtype))
    got = run(numbagrad, nm, _T(numbagrad, x, dtype), _T(numbagrad, w, dtype))
    _close(ref, got, dtype)
    assert got["names"] == ["encoder.weight"]
    assert got["tied_conflict"] == "ValueError"


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_call_buffers_updated_in_place(dtype):
    """In training mode the module updates its buffers in place: functional_call writes
    into the tensors passed in the dict, the module's own buffers stay unchanged."""

    def run(mod, model, x):
        func = mod.func
        model.train()
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
        out = func.functional_call(model, (params, buffers), (x,))
        # through grad, with the buffers as a (non-differentiated) argument: the update
        # writes a traced value into them
        g = func.grad(
            lambda p, b: func.functional_call(model, (p, b), (x,)).pow(2).sum(), argnums=0
        )
        try:
            g(params, buffers)
            raised = "no error"
        except RuntimeError:
            raised = "RuntimeError"
        return {
            "out": out,
            "grad_raises": raised,
            "passed_buffers": buffers,
            "module_buffers": dict(model.named_buffers()),
        }

    tm, nm = _tied_pair(dtype)
    x = _rand(35, 7, 6)
    ref = run(torch, tm, _T(torch, x, dtype))
    got = run(numbagrad, nm, _T(numbagrad, x, dtype))
    _close(ref, got, dtype)
    # one update from the plain call, one from the call under grad
    assert got["grad_raises"] == "no error"
    assert int(got["passed_buffers"]["norm.num_batches_tracked"]) == 2
    assert int(got["module_buffers"]["norm.num_batches_tracked"]) == 0


@pytest.mark.parametrize("train", [False, True])
def test_ensemble_and_per_sample_grads_with_buffers(train):
    """Ensembling models that hold buffers (a BatchNorm stand-in): in training mode each
    member updates its own slice of the stacked buffers in place under vmap. Per-sample
    gradients with unbatched buffers: in training mode the in-place update of an unbatched
    buffer with a batched value raises in both; in eval mode the Hessian with respect to the
    params dict and per-sample gradients of non-detached params."""

    def run(mod, models):
        func = mod.func
        for m in models:
            m.train(train)
        params, buffers = func.stack_module_state(models)
        base = copy.deepcopy(models[0])
        x = _T(mod, _rand(38, 5, 6), "float64")
        out = {
            "y": func.vmap(
                lambda p, b, x: func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None)
            )(params, buffers, x),
            "stacked_buffers": buffers,
        }
        p0 = {k: v.detach() for k, v in models[0].named_parameters()}
        b0 = {k: v.detach().clone() for k, v in models[0].named_buffers()}

        def loss(p, b, s):
            return func.functional_call(models[0], (p, b), (s.unsqueeze(0),)).pow(2).sum()

        if train:
            with pytest.raises(RuntimeError):
                func.vmap(func.grad(loss), in_dims=(None, None, 0))(p0, b0, x)
            return out

        def batch_loss(p, x):
            return func.functional_call(models[0], (p, b0), (x,)).pow(2).sum()

        out["psg"] = func.vmap(func.grad(loss), in_dims=(None, None, 0))(p0, b0, x)
        out["hessian"] = func.hessian(batch_loss)(p0, x)
        out["psg_not_detached"] = func.vmap(func.grad(batch_loss), in_dims=(None, 0))(
            dict(models[0].named_parameters()), x.unsqueeze(1)
        )
        return out

    torch.manual_seed(5)
    tmodels = [_classes(torch)["TiedAutoencoder"]().double() for _ in range(3)]
    nmodels = [_classes(numbagrad)["TiedAutoencoder"]().double() for _ in tmodels]
    with torch.no_grad():
        for i, t in enumerate(tmodels):
            t.norm.running_mean.copy_(torch.tensor(_rand(39 + i, 4)))
    nmodels = [_port(t, n) for t, n in zip(tmodels, nmodels)]
    _close(run(torch, tmodels), run(numbagrad, nmodels), "float64")


@pytest.mark.parametrize("how", ["no_grad", "detach"])
def test_grad_inplace_into_captured_buffer(how):
    """The BatchNorm-style running-statistics update of a captured buffer inside
    grad(functional_call(...)), of a value cut from the graph (no_grad() or detach()).
    PyTorch refuses it (its wrapped value is still the transform's); numbagrad's is a plain
    value there, and the write is done (docs/guide/deviations.rst). A tracked value raises
    in both."""

    def run(mod, how):
        buf = mod.zeros(3, dtype=mod.float64)

        def f(w):
            if how == "no_grad":
                with mod.no_grad():
                    buf.add_(w * 2)
            elif how == "detach":
                buf.add_(w.detach() * 2)
            else:
                buf.add_(w * 2)
            return (w * w).sum()

        g = mod.func.grad(f)(mod.tensor([0.0, 1.0, 2.0], dtype=mod.float64))
        return g, buf

    with pytest.raises(RuntimeError, match="captured"):
        run(torch, how)
    g, buf = run(numbagrad, how)
    np.testing.assert_array_equal(g.numpy(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(buf.numpy(), [0.0, 2.0, 4.0])
    for mod in (torch, numbagrad):
        with pytest.raises(RuntimeError, match="captured"):
            run(mod, "tracked")


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_has_aux_training_loop(dtype):
    """A functional training loop: grad(compute_loss, has_aux=True) returning (loss, dict of
    metrics), SGD updates of the params dict, grad_and_value with has_aux."""

    def run(mod, model, x, y):
        func, F = mod.func, mod.nn.functional
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, x, y):
            out = func.functional_call(model, (params, buffers), (x,))
            loss = F.cross_entropy(out, y)
            acc = (out.argmax(1) == y).to(out.dtype).mean()
            return loss, {"loss": loss.detach(), "acc": acc, "logits": out}

        lr = 0.1
        history = []
        for _ in range(5):
            grads, aux = func.grad(compute_loss, has_aux=True)(params, buffers, x, y)
            params = {k: p - lr * grads[k] for k, p in params.items()}
            history.append(aux)
        (g2, (loss2, aux2)) = func.grad_and_value(compute_loss, has_aux=True)(params, buffers, x, y)
        # per-sample (loss, aux) under vmap
        ps_grads, ps_aux = func.vmap(
            func.grad(compute_loss, has_aux=True), in_dims=(None, None, 0, 0)
        )(params, buffers, x.unsqueeze(1), y.unsqueeze(1))
        return {
            "history": history,
            "params": params,
            "g2": g2,
            "loss2": loss2,
            "aux2": aux2,
            "ps_grads": ps_grads,
            "ps_aux": ps_aux,
        }

    tm, nm = _pair(lambda mod: _classes(mod)["SimpleMLP"](din=12), dtype, seed=4)
    x = _rand(36, 16, 12)
    y = np.random.default_rng(37).integers(0, 10, size=16)
    ref = run(torch, tm, _T(torch, x, dtype), torch.tensor(y))
    got = run(numbagrad, nm, _T(numbagrad, x, dtype), numbagrad.tensor(y))
    _close(ref, got, dtype)
    assert not got["history"][0]["loss"].requires_grad
    assert float(got["history"][-1]["loss"]) < float(got["history"][0]["loss"])
