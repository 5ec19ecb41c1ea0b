"""Anomaly mode: detect_anomaly / set_detect_anomaly, NaN checks naming the node, the
forward traceback warning, and no cost (no wrapper) when off."""

import warnings

import pytest

import numbagrad
from numbagrad import autograd

torch = pytest.importorskip("torch")


def _nan_backward(m):
    x = m.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()  # 0 * inf = nan in SqrtBackward0
    y.backward()


def test_nan_error_and_traceback_warning_like_torch():
    for m in (numbagrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as e:
                    _nan_backward(m)
        assert str(e.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
        texts = [str(x.message) for x in w]
        assert any(t.startswith("Anomaly Detection has been enabled") for t in texts)
        trace = [t for t in texts if "Error detected in SqrtBackward0" in t]
        assert trace and "_nan_backward" in trace[0]  # the user's forward frame


def test_without_anomaly_mode_nan_passes_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _nan_backward(numbagrad)


def test_check_nan_false_and_flags():
    assert not autograd.is_anomaly_enabled()
    assert autograd.is_anomaly_check_nan_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly(check_nan=False):
            assert autograd.is_anomaly_enabled()
            assert not autograd.is_anomaly_check_nan_enabled()
            _nan_backward(numbagrad)  # no NaN check
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(True)
    try:
        assert autograd.is_anomaly_enabled()
        assert numbagrad.autograd.anomaly_mode.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_decorator_and_custom_function_errors_warn():
    class Bad(numbagrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @autograd.detect_anomaly()
        def run():
            x = numbagrad.ones(2, requires_grad=True)
            Bad.apply(x).sum().backward()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="boom"):
            run()
    texts = [str(x.message) for x in w]
    assert any("Error detected in Bad" in t and "in run" in t for t in texts)
    assert not autograd.is_anomaly_enabled()


def test_stamps_only_while_on():
    # NOTE [Recording options]: a switch the recording path reads, no class patched
    from numbagrad._core.extension import RECORDING
    from numbagrad.ops._op import Primitive

    record = Primitive.__dict__["_record"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            assert RECORDING.active and Primitive.__dict__["_record"] is record
            x = numbagrad.ones(2, requires_grad=True)
            assert "_anomaly_trace" in (x * 2).grad_fn.__dict__
            y = x * 1.0
            v = y[1:]
            y.mul_(2.0)  # v's history is re-derived by a direct ``_record`` call
            assert v.grad_fn.name() == "SliceBackward0"
            assert "_anomaly_trace" in v.grad_fn.__dict__
    assert not RECORDING.active
    assert "_anomaly_trace" not in (x * 2).grad_fn.__dict__
