"""numbagrad.save / numbagrad.load: containers, shared storage, weights_only, paths and
file objects, the documented format, damaged files."""

import collections
import io
import json
import math
import pickle
import zipfile

import numpy as np
import pytest

import numbagrad


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    numbagrad.save(obj, buf)
    buf.seek(0)
    return numbagrad.load(buf, **load_kw)


class Thing:
    def __init__(self, v):
        self.v = v


def test_nested_containers_and_scalars():
    obj = {
        "a": numbagrad.arange(6.0).reshape(2, 3),
        "b": [1, 2.5, "s", None, True],
        "c": (numbagrad.tensor([1, 2]), {"d": numbagrad.tensor(True)}),
        3: math.inf,
        "nan": math.nan,
        "dt": numbagrad.float64,
        "size": numbagrad.Size([2, 3]),
        "dev": numbagrad.device("cpu"),
    }
    out = roundtrip(obj)
    assert out["a"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert out["a"].dtype is numbagrad.float32
    assert out["b"] == [1, 2.5, "s", None, True]
    assert isinstance(out["c"], tuple) and out["c"][0].dtype is numbagrad.int64
    assert out["c"][1]["d"].tolist() is True
    assert out[3] == math.inf and math.isnan(out["nan"])
    assert out["dt"] is numbagrad.float64
    assert out["size"] == numbagrad.Size([2, 3]) and type(out["size"]) is numbagrad.Size
    assert out["dev"] == numbagrad.device("cpu")


def test_state_dict_ordered_and_requires_grad():
    sd = collections.OrderedDict(
        [("w", numbagrad.ones(2, 2, requires_grad=True)), ("b", numbagrad.zeros(2))]
    )
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict and list(out) == ["w", "b"]
    assert out["w"].requires_grad and out["w"].is_leaf and not out["b"].requires_grad


def test_views_share_storage_after_load():
    base = numbagrad.arange(12.0)
    x = base.reshape(3, 4)
    obj = {"base": base, "t": x.t(), "row": x[1], "step": base[::3], "flip": base.flip(0)}
    buf = io.BytesIO()
    numbagrad.save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    # base, its views: one storage (flip copies, as it does in numbagrad)
    assert len(manifest["storages"]) == 2
    buf.seek(0)
    out = numbagrad.load(buf)
    for k in ("t", "row", "step", "flip"):
        assert out[k].tolist() == obj[k].tolist()
    assert out["t"].stride() == obj["t"].stride()
    out["row"][0] = 100.0
    assert out["base"][4].item() == 100.0 and out["t"][0, 1].item() == 100.0
    v = out["base"]._version
    out["base"].add_(1)
    assert out["step"]._version == v + 1  # one version counter, as one storage


def test_weights_only_refuses_pickles_unless_allowed():
    obj = {"w": numbagrad.ones(2), "thing": Thing(3)}
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        roundtrip(obj)
    out = roundtrip(obj, weights_only=False)
    assert out["thing"].v == 3 and out["w"].tolist() == [1.0, 1.0]
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL builtins\.frozenset"):
        roundtrip(frozenset([1, 2]))  # outside the allow-list too (PyTorch's: sets are in)


def test_path_and_file_objects(tmp_path):
    p = tmp_path / "ckpt.pt"
    numbagrad.save({"x": numbagrad.tensor([1.0, 2.0])}, p)
    assert numbagrad.load(p)["x"].tolist() == [1.0, 2.0]
    numbagrad.save([numbagrad.ones(1)], str(p))
    with open(p, "rb") as f:
        assert numbagrad.load(f, map_location="cpu")[0].tolist() == [1.0]
    assert numbagrad.load(str(p), map_location={"cpu": "cpu"})[0].tolist() == [1.0]


def test_errors():
    buf = io.BytesIO(b"not a zip")
    with pytest.raises(RuntimeError, match="not a numbagrad file"):
        numbagrad.load(buf)
    with pytest.raises(RuntimeError, match="not available"):
        roundtrip(numbagrad.ones(1), map_location="cuda")
    assert roundtrip(numbagrad.ones(1), map_location=lambda s, loc: s).tolist() == [1.0]
    with pytest.raises(TypeError, match="map_location returned int"):
        roundtrip(numbagrad.ones(1), map_location=lambda s, loc: 0)
    a = []
    a.append(a)
    with pytest.raises(ValueError, match="cycle"):
        numbagrad.save(a, io.BytesIO())
    with pytest.raises(TypeError, match="path or a writable"):
        numbagrad.save(numbagrad.ones(1), 3)


def _rewrite(buf, edit):
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in src.namelist():
            data = src.read(name)
            if name == "manifest.json":
                m = json.loads(data)
                edit(m)
                data = json.dumps(m).encode()
            zf.writestr(name, data)
    out.seek(0)
    return out


def test_damaged_offsets_are_refused():
    buf = io.BytesIO()
    numbagrad.save(numbagrad.arange(4.0)[1:], buf)

    def far(m):
        m["root"]["tensor"]["offset"] = 10

    def stride(m):
        m["root"]["tensor"]["stride"] = [5]

    for edit in (far, stride):
        with pytest.raises(RuntimeError, match="outside its storage"):
            numbagrad.load(_rewrite(buf, edit))

    def storage(m):
        m["root"]["tensor"]["storage"] = 7

    with pytest.raises(RuntimeError, match="does not hold"):
        numbagrad.load(_rewrite(buf, storage))


def test_non_contiguous_from_numpy_and_empty():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = numbagrad.from_numpy(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    out = roundtrip([numbagrad.from_numpy(a), t, numbagrad.zeros(0, 3)])
    assert out[0].tolist() == a.tolist() and out[1].tolist() == t.tolist()
    assert tuple(out[2].shape) == (0, 3)
