"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled."""

import threading

import pytest

import numbagrad
from numbagrad import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled


def leaf():
    return numbagrad.tensor([1.0, 2.0], requires_grad=True)


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """Every test starts and must end with grad mode on."""
    assert is_grad_enabled()
    yield
    assert is_grad_enabled(), "a test left grad mode off"


def test_default_is_enabled_and_records():
    y = leaf() * 2.0
    assert y.requires_grad and y.grad_fn is not None


def test_no_grad_context():
    x = leaf()
    with no_grad():
        assert not is_grad_enabled()
        y = x * 2.0
    assert is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    # Leaves keep their flag; creation functions honour requires_grad even in no_grad.
    assert x.requires_grad
    with no_grad():
        z = numbagrad.zeros(2, requires_grad=True)
    assert z.requires_grad


def test_no_grad_decorator_with_and_without_parentheses():
    x = leaf()

    @no_grad()
    def f(t):
        assert not is_grad_enabled()
        return t * 2.0

    @no_grad
    def g(t):
        return t * 2.0

    assert not f(x).requires_grad
    assert not g(x).requires_grad
    assert f.__name__ == "f"  # functools.wraps keeps the name


def test_enable_grad_inside_no_grad():
    x = leaf()
    with no_grad():
        with enable_grad():
            assert is_grad_enabled()
            y = x * 2.0
        assert not is_grad_enabled()
    assert y.requires_grad

    @enable_grad()
    def f(t):
        return t * 2.0

    with no_grad():
        assert f(x).requires_grad


def test_set_grad_enabled_context_and_function():
    x = leaf()
    with set_grad_enabled(False):
        assert not is_grad_enabled()
        assert not (x * 2.0).requires_grad
        with set_grad_enabled(True):
            assert (x * 2.0).requires_grad
    assert is_grad_enabled()
    # Called as a plain function it switches the mode until switched back.
    set_grad_enabled(False)
    try:
        assert not is_grad_enabled()
    finally:
        set_grad_enabled(True)
    assert is_grad_enabled()


def test_set_grad_enabled_decorator():
    @set_grad_enabled(False)
    def f(t):
        return t * 2.0

    assert not f(leaf()).requires_grad
    assert is_grad_enabled()


def test_nesting_restores_each_level():
    states = []
    with no_grad():
        states.append(is_grad_enabled())
        with enable_grad():
            states.append(is_grad_enabled())
            with no_grad():
                states.append(is_grad_enabled())
            states.append(is_grad_enabled())
        states.append(is_grad_enabled())
    states.append(is_grad_enabled())
    assert states == [False, True, False, True, False, True]


def test_mode_restored_after_exception():
    with pytest.raises(ValueError), no_grad():
        raise ValueError("boom")
    assert is_grad_enabled()

    @no_grad()
    def fails():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert is_grad_enabled()


def test_inference_mode():
    x = leaf()
    with inference_mode():
        assert not is_grad_enabled()
        y = x * 2.0
    assert not y.requires_grad and y.grad_fn is None
    with inference_mode(False):
        assert is_grad_enabled()
        assert (x * 2.0).requires_grad

    @inference_mode()
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad


def test_no_grad_does_not_change_backward_inside_enable_grad():
    x = leaf()
    with no_grad(), enable_grad():
        (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = is_grad_enabled()
        seen["requires_grad"] = (leaf() * 2.0).requires_grad
        with no_grad():
            seen["inner"] = is_grad_enabled()

    with no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        # The worker's own no_grad did not leak back here, nor ours to it.
        assert not is_grad_enabled()
    assert seen == {"enabled": True, "requires_grad": True, "inner": False}


def test_thread_switch_does_not_leak_to_main():
    ready = threading.Event()
    release = threading.Event()

    def worker():
        with no_grad():
            ready.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    ready.wait(5)
    try:
        assert is_grad_enabled()
        assert (leaf() * 2.0).requires_grad
    finally:
        release.set()
        t.join()
