"""Legacy typed constructors (``FloatTensor``...), memory formats and ``numbagrad.backends``
flags against PyTorch."""

import pickle

import numpy as np
import pytest

import numbagrad

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


# -- legacy typed constructors, memory formats, backends ----------------------------------------
def test_legacy_typed_constructors_match_torch():
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        o, t = getattr(numbagrad, name), getattr(torch, name)
        _same(o([1, 0, 2]), t([1, 0, 2]))
        assert tuple(o(2, 3).shape) == tuple(t(2, 3).shape)
        assert tuple(o(numbagrad.Size([4])).shape) == (4,)
        assert o().shape == (0,)
        assert isinstance(numbagrad.ones(1).to(o.dtype), o)
        assert not isinstance(numbagrad.ones(1, dtype=numbagrad.float16), o)
    x = numbagrad.ones(2)
    assert x.type(numbagrad.DoubleTensor).dtype is numbagrad.float64
    assert numbagrad.FloatTensor(x) is x
    with pytest.raises(TypeError, match="expected a tensor of dtype"):
        numbagrad.FloatTensor(numbagrad.ones(2, dtype=numbagrad.float64))


def test_memory_formats():
    x = numbagrad.ones(2, 3)
    for fmt in (numbagrad.preserve_format, numbagrad.contiguous_format, None):
        for fn in (
            numbagrad.zeros_like,
            numbagrad.ones_like,
            numbagrad.empty_like,
            numbagrad.rand_like,
            numbagrad.randn_like,
        ):
            assert fn(x, memory_format=fmt).shape == (2, 3)
        assert x.clone(memory_format=fmt).is_contiguous()
        assert numbagrad.full_like(x, 2.0, memory_format=fmt)[0, 0].item() == 2.0
    assert repr(numbagrad.preserve_format) == repr(torch.preserve_format)
    assert pickle.loads(pickle.dumps(numbagrad.channels_last)) is numbagrad.channels_last
    with pytest.raises(NotImplementedError, match="channels_last"):
        numbagrad.zeros_like(x, memory_format=numbagrad.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        x.clone(memory_format="contiguous")


def test_backends_flags_exist_and_report_no_cudnn_or_mps():
    import numbagrad.backends.cudnn as cudnn

    cudnn.deterministic = True
    cudnn.benchmark = False
    assert numbagrad.backends.cudnn.deterministic is True
    assert not cudnn.is_available() and cudnn.version() is None
    assert not numbagrad.backends.mps.is_available()
    cudnn.deterministic = False
