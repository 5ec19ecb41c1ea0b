"""The op profiler: forward and backward events, nesting, zero cost when off, errors."""

import json
import threading

import numpy as np
import pytest

import numbagrad
from numbagrad.autograd import engine, profiler
from numbagrad.autograd.function import _FunctionApply
from numbagrad.ops._op import Primitive


class Square(numbagrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def _originals():
    return (
        Primitive.__dict__["_eval"],
        _FunctionApply.__dict__["_eval"],
        engine._Arrays.__dict__["run"],
        engine._Tensors.__dict__["run"],
        engine._store_leaf_grad,
        engine._execute,
    )


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


def test_forward_backward_and_accumulation_events():
    x = numbagrad.randn(50, dtype=numbagrad.float64, requires_grad=True)
    with profiler.profile() as prof:
        (x.exp() * x).sum().backward()
    counts = _counts(prof)
    assert counts == {
        "Exp": 1,
        "Mul": 1,
        "Sum": 1,
        "SumBackward0": 1,
        "MulBackward0": 1,
        "ExpBackward0": 1,
        "AccumulateGrad": 1,
        "autograd::engine::backward": 1,
    }
    for ev in prof.events():
        assert ev.cpu_time_total >= ev.self_cpu_time_total >= 0


def test_custom_function_nests_its_primitives():
    x = numbagrad.randn(5, dtype=numbagrad.float64, requires_grad=True)
    with profiler.profile() as prof:
        Square.apply(x).sum().backward()
    evs = {e.key: e for e in prof.key_averages()}
    assert evs["Square"].count == 1 and evs["SquareBackward"].count == 1
    # the forward's Mul runs inside Square: Square's self time excludes it
    sq = next(e for e in prof.events() if e.name == "Square")
    assert sq.self_cpu_time_total < sq.cpu_time_total
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_create_graph_and_func_transforms_are_timed_at_the_bottom():
    x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64, requires_grad=True)
    with profiler.profile() as prof:
        (g,) = numbagrad.autograd.grad((x**3).sum(), x, create_graph=True)
        g.sum().backward()
        numbagrad.func.grad(lambda t: t.sin().sum())(x.detach())
    counts = _counts(prof)
    assert counts["PowBackward0"] >= 1 and "Sin" in counts
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_nothing_is_wrapped_outside_a_profile():
    before = _originals()
    with profiler.profile():
        assert Primitive.__dict__["_eval"] is not before[0]
        with profiler.profile():  # nested profiles share the wrappers
            pass
        assert Primitive.__dict__["_eval"] is not before[0]
    assert _originals() == before


def test_wrappers_are_removed_when_the_block_raises():
    before = _originals()
    with pytest.raises(ZeroDivisionError), profiler.profile():
        numbagrad.ones(1) / 1
        raise ZeroDivisionError
    assert _originals() == before


def test_nested_profiles_both_see_the_events():
    x = numbagrad.ones(3)
    with profiler.profile() as outer:
        with profiler.profile() as inner:
            x + 1
        x * 2
    assert _counts(inner) == {"Add": 1}
    assert _counts(outer) == {"Add": 1, "Mul": 1}


def test_record_function_labels_and_decorates():
    @profiler.record_function("decorated")
    def step(t):
        return t * 2

    x = numbagrad.ones(3)
    with profiler.profile() as prof:
        with profiler.record_function("block"):
            step(x)
    evs = {e.name: e for e in prof.events()}
    assert evs["block"].cpu_time_total >= evs["decorated"].cpu_time_total
    step(x)  # outside a profile: records nothing, raises nothing


def test_threads_keep_their_own_nesting():
    x = numbagrad.ones(100)
    with profiler.profile() as prof:
        threads = [threading.Thread(target=lambda: [x * 2 for _ in range(20)]) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert _counts(prof) == {"Mul": 60}
    assert all(e.child_time == 0 for e in prof.events())


def test_record_shapes_and_table():
    a = numbagrad.ones(2, 3)
    b = numbagrad.ones(3, 4)
    with profiler.profile(record_shapes=True) as prof:
        a @ b
        a * 2
    rows = prof.key_averages(group_by_input_shape=True)
    shapes = {r.key: r.input_shapes for r in rows}
    assert shapes["Matmul"] == [[2, 3], [3, 4]]
    text = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    assert "Matmul" in text or "Mul" in text
    assert "Self CPU time total" in text
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="cuda_time")


def test_group_by_shape_needs_record_shapes():
    with profiler.profile() as prof:
        numbagrad.ones(2) + 1
    with pytest.raises(RuntimeError, match="record_shapes=True"):
        prof.key_averages(group_by_input_shape=True)


def test_chrome_trace(tmp_path):
    with profiler.profile() as prof:
        numbagrad.ones(2).exp()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert [e["name"] for e in trace] == ["Exp"] and trace[0]["ph"] == "X"


def test_unsupported_options_raise():
    with pytest.raises(NotImplementedError, match="use_cuda"):
        profiler.profile(use_cuda=True)
    from numbagrad.profiler import ProfilerActivity, profile

    with pytest.raises(NotImplementedError, match="CUDA"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    p = profiler.profile(enabled=False)
    with p:
        numbagrad.ones(1) + 1
    assert len(p.events()) == 0


def test_a_profile_object_cannot_be_entered_twice():
    p = profiler.profile()
    with p, pytest.raises(RuntimeError, match="already active"):
        p.__enter__()


def test_torch_profiler_spelling():
    from numbagrad.profiler import ProfilerActivity, profile, record_function

    w = numbagrad.ones(4, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("loss"):
            (w * 3).sum().backward()
    assert _counts(prof)["loss"] == 1
