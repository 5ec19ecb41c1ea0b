"""numbagrad.hub and numbagrad.utils.model_zoo: downloads from a local HTTP server bound to
127.0.0.1 and from file:// URLs (hash checks, no partial files, the cache, the directories
and their environment variables, progress output), hubconf.py from a local directory, and
numbagrad.load of PyTorch checkpoints (zip and legacy formats) compared with torch.load.

tests/data/torch_checkpoint.pt and torch_checkpoint_legacy.pt were written by PyTorch 2.13
(``torch.save(_torch_object(torch), path)``, the second with
``_use_new_zipfile_serialization=False``), so that reading them is tested without PyTorch.
"""

import argparse
import collections
import hashlib
import http.client
import http.server
import io
import math
import os
import pathlib
import pickle
import sys
import threading
import urllib.error
import warnings
import zipfile

import numpy as np
import pytest

import numbagrad
from numbagrad import hub

DATA = pathlib.Path(__file__).resolve().parent / "data"
TORCH_ZIP = DATA / "torch_checkpoint.pt"
TORCH_LEGACY = DATA / "torch_checkpoint_legacy.pt"


# -- a local HTTP server (127.0.0.1 only) ---------------------------------------------------


class _Server:
    def __init__(self):
        self.files = {}  # path -> bytes
        self.requests = collections.Counter()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests[self.path] += 1
                if self.path.startswith("/drop/"):  # promises the whole body, sends half
                    body = owner.files[self.path.removeprefix("/drop")]
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                body = owner.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _hub_state(monkeypatch, tmp_path):
    """Every test starts without set_dir and with the cache variables pointing into tmp."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    for var in ("NUMBAGRAD_HOME", "TORCH_HOME", "TORCH_HUB", "TORCH_MODEL_ZOO"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _saved(obj):
    buf = io.BytesIO()
    numbagrad.save(obj, buf)
    return buf.getvalue()


def _sha(data):
    return hashlib.sha256(data).hexdigest()


# -- download_url_to_file -----------------------------------------------------------------


def test_download_http_and_file_urls(server, tmp_path):
    body = os.urandom(300_000)  # a few read chunks
    server.files["/w.bin"] = body
    hub.download_url_to_file(server.url("/w.bin"), str(tmp_path / "a.bin"), progress=False)
    assert (tmp_path / "a.bin").read_bytes() == body
    hub.download_url_to_file((tmp_path / "a.bin").as_uri(), str(tmp_path / "b.bin"), None, False)
    assert (tmp_path / "b.bin").read_bytes() == body
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.bin"]


def test_hash_prefix_match_and_mismatch(server, tmp_path):
    body = b"numbagrad" * 100
    server.files["/x.bin"] = body
    dst = tmp_path / "x.bin"
    hub.download_url_to_file(server.url("/x.bin"), str(dst), _sha(body)[:10], progress=False)
    assert dst.read_bytes() == body
    dst.unlink()
    wrong = "0" * 8 if not _sha(body).startswith("0" * 8) else "1" * 8
    msg = f'invalid hash value (expected "{wrong}", got "{_sha(body)}")'
    with pytest.raises(RuntimeError) as e:
        hub.download_url_to_file(server.url("/x.bin"), str(dst), wrong, progress=False)
    assert str(e.value) == msg
    assert list(tmp_path.iterdir()) == []  # neither dst nor a .partial file


def test_failed_downloads_leave_no_file_and_keep_the_old_one(server, tmp_path):
    body = os.urandom(200_000)
    server.files["/big.bin"] = body
    dst = tmp_path / "big.bin"
    with pytest.raises(http.client.IncompleteRead):
        hub.download_url_to_file(server.url("/drop/big.bin"), str(dst), progress=False)
    assert server.requests["/drop/big.bin"] == 1
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(urllib.error.HTTPError, match="404"):
        hub.download_url_to_file(server.url("/missing.bin"), str(dst), progress=False)
    assert list(tmp_path.iterdir()) == []
    dst.write_bytes(b"good")  # a failed download does not overwrite a complete file
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(server.url("/big.bin"), str(dst), "ffffffffff", progress=False)
    assert dst.read_bytes() == b"good" and list(tmp_path.iterdir()) == [dst]


def test_progress_output(server, tmp_path, capsys, monkeypatch):
    server.files["/p.bin"] = b"x" * 1000
    hub.download_url_to_file(server.url("/p.bin"), str(tmp_path / "q.bin"), progress=False)
    assert capsys.readouterr().err == ""
    hub.download_url_to_file(server.url("/p.bin"), str(tmp_path / "r.bin"), progress=True)
    assert capsys.readouterr().err != ""  # tqdm's bar, or the fallback's
    monkeypatch.setattr(hub, "tqdm", hub._Faketqdm)
    hub.download_url_to_file(server.url("/p.bin"), str(tmp_path / "s.bin"), progress=True)
    assert capsys.readouterr().err == "\r100.0%\n"
    hub.download_url_to_file(server.url("/p.bin"), str(tmp_path / "t.bin"), progress=False)
    assert capsys.readouterr().err == ""


# -- load_state_dict_from_url -------------------------------------------------------------


def test_cache_reuse_model_dir_and_file_name(server, tmp_path, capsys):
    server.files["/ckpt/w.pt"] = _saved({"w": numbagrad.arange(3.0)})
    url = server.url("/ckpt/w.pt")
    model_dir = tmp_path / "models"
    sd = hub.load_state_dict_from_url(url, model_dir=str(model_dir), progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    out = capsys.readouterr().out
    assert out == f'Downloading: "{url}" to {model_dir / "w.pt"}\n'
    sd = hub.load_state_dict_from_url(url, model_dir=str(model_dir), progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    assert server.requests["/ckpt/w.pt"] == 1 and capsys.readouterr().out == ""
    sd = hub.load_state_dict_from_url(
        url, model_dir=str(model_dir), progress=False, file_name="other.pt"
    )
    assert server.requests["/ckpt/w.pt"] == 2
    assert sorted(p.name for p in model_dir.iterdir()) == ["other.pt", "w.pt"]
    # the cached file is what is loaded: the URL is not consulted again
    numbagrad.save({"w": numbagrad.zeros(1)}, model_dir / "w.pt")
    assert hub.load_state_dict_from_url(url, str(model_dir))["w"].tolist() == [0.0]
    assert server.requests["/ckpt/w.pt"] == 2


def test_default_dir_is_hub_checkpoints(server, tmp_path):
    server.files["/a.pt"] = _saved([numbagrad.ones(1)])
    hub.load_state_dict_from_url(server.url("/a.pt"), progress=False)
    assert (tmp_path / "xdg" / "torch" / "hub" / "checkpoints" / "a.pt").is_file()
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")
    hub.load_state_dict_from_url(server.url("/a.pt"), progress=False)
    assert (tmp_path / "mine" / "checkpoints" / "a.pt").is_file()


def test_get_dir_environment(monkeypatch, tmp_path):
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hub.get_dir() == str(tmp_path / "home" / ".cache" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", "~/th")
    assert hub.get_dir() == str(tmp_path / "home" / "th" / "hub")
    monkeypatch.setenv("NUMBAGRAD_HOME", str(tmp_path / "ng"))
    assert hub.get_dir() == str(tmp_path / "ng" / "hub")
    hub.set_dir("~/explicit")
    assert hub.get_dir() == str(tmp_path / "home" / "explicit")
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        hub.get_dir()


def test_check_hash(server, tmp_path):
    data = _saved({"v": numbagrad.tensor([1, 2])})
    good = f"/v-{_sha(data)[:8]}.pt"
    bad = "/v-deadbeef.pt"
    server.files[good] = server.files[bad] = data
    sd = hub.load_state_dict_from_url(server.url(good), str(tmp_path), check_hash=True)
    assert sd["v"].tolist() == [1, 2]
    with pytest.raises(RuntimeError, match='expected "deadbeef"'):
        hub.load_state_dict_from_url(server.url(bad), str(tmp_path), check_hash=True)
    assert not (tmp_path / "v-deadbeef.pt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    sd = hub.load_state_dict_from_url(server.url(bad), str(tmp_path), check_hash=False)
    assert sd["v"].tolist() == [1, 2]


def test_map_location_and_weights_only(server, tmp_path):
    data = _saved({"w": numbagrad.arange(4.0), "ns": argparse.Namespace(a=1)})
    server.files["/m.pt"] = data
    url = server.url("/m.pt")
    d = str(tmp_path)
    assert (
        hub.load_state_dict_from_url(url, d, map_location="cpu")["ns"].a == 1
    )  # weights_only=False
    with pytest.raises(pickle.UnpicklingError, match=r"argparse\.Namespace"):
        hub.load_state_dict_from_url(url, d, weights_only=True)
    for loc in (numbagrad.device("cpu"), {"cpu": "cpu"}, lambda s, tag: None):
        assert hub.load_state_dict_from_url(url, d, map_location=loc)["w"].tolist()[3] == 3.0
    seen = []

    def fn(storage, tag):
        seen.append((tag, storage.tolist()))
        return storage

    hub.load_state_dict_from_url(url, d, map_location=fn)
    assert seen == [("cpu", [0.0, 1.0, 2.0, 3.0])]
    out = hub.load_state_dict_from_url(url, d, map_location=lambda s, tag: s * 2)
    assert out["w"].tolist() == [0.0, 2.0, 4.0, 6.0]
    if not numbagrad.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"CUDA device but numbagrad.cuda.is_available"):
            hub.load_state_dict_from_url(url, d, map_location="cuda")
    with pytest.raises(TypeError, match="map_location returned str"):
        hub.load_state_dict_from_url(url, d, map_location=lambda s, tag: "cpu")
    with pytest.raises(RuntimeError, match="2 elements of float32; the file's holds 4"):
        hub.load_state_dict_from_url(url, d, map_location=lambda s, tag: s[:2])


def test_model_zoo_load_url_is_the_hub_function(server, tmp_path):
    from numbagrad.utils import model_zoo

    assert model_zoo.load_url is hub.load_state_dict_from_url
    assert numbagrad.utils.model_zoo is model_zoo and numbagrad.hub is hub
    server.files["/z.pt"] = _saved({"z": numbagrad.ones(2)})
    assert model_zoo.load_url(server.url("/z.pt"), str(tmp_path))["z"].tolist() == [1.0, 1.0]


def test_empty_numbagrad_file_is_not_a_legacy_zip(tmp_path):
    (tmp_path / "src").mkdir()
    numbagrad.save({}, tmp_path / "src" / "e.pt")  # a zip holding only manifest.json
    got = hub.load_state_dict_from_url((tmp_path / "src" / "e.pt").as_uri(), str(tmp_path))
    assert got == {} and not (tmp_path / "manifest.json").exists()


# -- PyTorch's checkpoints without PyTorch (the committed files) -----------------------------


def _check_committed(obj):
    sd = obj["model"]
    assert type(sd) is collections.OrderedDict
    assert list(sd) == ["w", "wt", "row", "p", "h", "i8", "n", "b"]
    assert sd._metadata == {"": {"version": 1}}
    w = sd["w"]
    assert w.dtype is numbagrad.float32 and w.shape == (2, 3) and w.stride() == (3, 1)
    assert w.tolist() == [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]
    assert sd["wt"].stride() == (1, 3) and sd["wt"].tolist() == w.t().tolist()
    assert sd["row"].storage_offset() == 3 and sd["row"].tolist() == [0.75, 1.0, 1.25]
    p = sd["p"]
    assert type(p) is numbagrad.nn.Parameter and p.requires_grad and p.tolist() == [1.0, -2.0]
    assert sd["h"].dtype is numbagrad.float16 and sd["h"].tolist() == [1.5, -2.0]
    assert sd["i8"].dtype is numbagrad.int64 and sd["i8"].tolist() == [-128, 127]  # widened
    assert sd["n"].dtype is numbagrad.int64 and sd["n"].shape == () and sd["n"].item() == 7
    assert sd["b"].dtype is numbagrad.bool and sd["b"].tolist() == [True, False]
    tail, inner = obj["extra"]
    assert tail.shape == (2, 2) and tail.stride() == (3, 1) and tail.storage_offset() == 1
    assert inner["k"].dtype is numbagrad.float64 and inner["k"].item() == 2.5
    assert obj["step"] == 3
    w[1, 2] = 9.0  # the views share the one storage
    assert sd["wt"][2, 1].item() == 9.0 and sd["row"][2].item() == 9.0
    assert tail[1, 1].item() == 9.0 and sd["w"]._version == sd["row"]._version


@pytest.mark.parametrize("path", [TORCH_ZIP, TORCH_LEGACY], ids=["zip", "legacy"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_committed_torch_checkpoints(path, weights_only):
    _check_committed(numbagrad.load(path, weights_only=weights_only))
    with open(path, "rb") as f:
        _check_committed(numbagrad.load(f, map_location="cpu"))


def test_committed_torch_checkpoint_over_http(server, tmp_path):
    server.files["/torch/resnet-tiny.pth"] = TORCH_ZIP.read_bytes()
    server.files["/torch/legacy.pth"] = TORCH_LEGACY.read_bytes()
    _check_committed(hub.load_state_dict_from_url(server.url("/torch/resnet-tiny.pth")))
    _check_committed(
        hub.load_state_dict_from_url(server.url("/torch/legacy.pth"), weights_only=True)
    )
    checkpoints = pathlib.Path(hub.get_dir()) / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["legacy.pth", "resnet-tiny.pth"]


def test_legacy_checkpoint_zipped_by_hand(tmp_path):
    zipped = tmp_path / "src" / "old.zip"
    zipped.parent.mkdir()
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.write(TORCH_LEGACY, "old.pth")
    model_dir = tmp_path / "models"
    with pytest.warns(FutureWarning, match="old format < 1.6"):
        obj = hub.load_state_dict_from_url(zipped.as_uri(), str(model_dir), progress=False)
    _check_committed(obj)
    assert (model_dir / "old.pth").read_bytes() == TORCH_LEGACY.read_bytes()
    with zipfile.ZipFile(tmp_path / "src" / "evil.zip", "w") as zf:
        zf.writestr("../escaped.pth", TORCH_LEGACY.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="Unsafe path"):
            hub.load_state_dict_from_url((tmp_path / "src" / "evil.zip").as_uri(), str(model_dir))
    assert not (tmp_path / "escaped.pth").exists()


def _rezip(path, edit):
    """The zip checkpoint at ``path`` with ``edit(name, data) -> data`` applied per entry."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = edit(name, src.read(name))
            if data is not None:
                dst.writestr(name, data)
    out.seek(0)
    return out


def _to_cuda_tag(name, data):
    if name.endswith("data.pkl"):  # protocol 2: no frames, so a string may change length
        return data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    return data


def test_location_tags_and_map_location():
    tags = []

    def record(storage, tag):
        tags.append(tag)
        return storage

    obj = numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag), map_location=record)
    assert tags == ["cuda:0"] * 7
    _check_committed(obj)
    _check_committed(numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag), map_location="cpu"))
    _check_committed(
        numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag), map_location={"cuda:0": "cpu"})
    )
    if not numbagrad.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag))
        with pytest.raises(RuntimeError, match="CUDA is not available"):  # None: the tag's
            numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag), map_location=lambda s, tag: None)
    else:
        with pytest.raises(NotImplementedError, match="'cpu' only"):
            numbagrad.load(_rezip(TORCH_ZIP, _to_cuda_tag))


def test_big_endian_checkpoint():
    dtypes = _storage_dtypes(TORCH_ZIP)
    assert sorted(dtypes.values()) == ["?", "f2", "f4", "f4", "f8", "i1", "i8"]

    def big(name, data):
        if name.endswith("/byteorder"):
            return b"big"
        if "/data/" in name:
            arr = np.frombuffer(data, dtypes[name.rsplit("/", 1)[1]])
            return arr.astype(arr.dtype.newbyteorder(">")).tobytes()
        return data

    _check_committed(numbagrad.load(_rezip(TORCH_ZIP, big)))
    bad = _rezip(TORCH_ZIP, lambda n, d: b"middle" if n.endswith("/byteorder") else d)
    with pytest.raises(ValueError, match="Unknown endianness type: middle"):
        numbagrad.load(bad)


class _Anything:
    def __init__(self, *args, **kwargs):
        pass

    def __setitem__(self, key, value):
        pass


def _storage_dtypes(path):
    """key -> NumPy dtype of each storage, from the persistent ids of data.pkl."""
    codes = {"Float": "f4", "Half": "f2", "Char": "i1", "Long": "i8", "Bool": "?", "Double": "f8"}
    out = {}

    class Ids(pickle.Unpickler):
        def find_class(self, module, name):
            return codes[name.removesuffix("Storage")] if name.endswith("Storage") else _Anything

        def persistent_load(self, pid):
            out[pid[2]] = pid[1]

    with zipfile.ZipFile(path) as zf:
        pkl = next(zf.read(n) for n in zf.namelist() if n.endswith("/data.pkl"))
    Ids(io.BytesIO(pkl)).load()
    return out


def test_damaged_and_unsupported_torch_files():
    def short(name, data):
        return data[:-1] if name.endswith("/data/0") else data

    with pytest.raises(RuntimeError, match="the file is damaged"):
        numbagrad.load(_rezip(TORCH_ZIP, short))
    with pytest.raises(RuntimeError, match="does not hold"):
        numbagrad.load(_rezip(TORCH_ZIP, lambda n, d: None if n.endswith("/data/1") else d))
    jit = _rezip(TORCH_ZIP, lambda n, d: d)
    with zipfile.ZipFile(jit, "a") as zf:
        zf.writestr("torch_checkpoint/constants.pkl", b"")
    jit.seek(0)
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        numbagrad.load(jit)
    legacy = TORCH_LEGACY.read_bytes()
    with pytest.raises(RuntimeError, match="truncated"):
        numbagrad.load(io.BytesIO(legacy[:-3]))
    with pytest.raises(RuntimeError, match="not a numbagrad file nor a PyTorch checkpoint"):
        numbagrad.load(io.BytesIO(pickle.dumps([1, 2])))
    tar = io.BytesIO()
    import tarfile

    with tarfile.open(fileobj=tar, mode="w") as tf:
        info = tarfile.TarInfo("pickle")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    tar.seek(0)
    with pytest.raises(RuntimeError, match=r"tar format of PyTorch before 0\.4"):
        numbagrad.load(tar)


# -- hub.load / list / help from a local directory -----------------------------------------

HUBCONF = '''
"""A tiny hub repo."""
import numbagrad
from hub_helper_for_test import SCALE

dependencies = ["numpy"]


def tiny(n, scale=1.0):
    """A vector of ones times scale."""
    return numbagrad.ones(n) * scale * SCALE


def needs_missing():
    return None


def _private():
    return None
'''


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    (d / "hub_helper_for_test.py").write_text("SCALE = 2.0\n")
    yield d
    sys.modules.pop("hub_helper_for_test", None)


def test_hub_load_local(repo):
    path_before = list(sys.path)
    out = hub.load(str(repo), "tiny", 3, source="local", scale=1.5)
    assert out.tolist() == [3.0, 3.0, 3.0]
    assert sys.path == path_before
    out = hub.load(str(repo), "tiny", 2, source="LOCAL", trust_repo=True, force_reload=True)
    assert out.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match="model should be a string"):
        hub.load(str(repo), 3, source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        hub.load(str(repo), "tiny", source="svn")
    (repo / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_x"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_x"):
        hub.load(str(repo), "tiny", 1, source="local")
    assert sys.path == path_before


def test_hub_github_is_refused(repo):
    for call in (
        lambda: hub.load("pytorch/vision:0.10", "resnet18"),
        lambda: hub.load("pytorch/vision", "resnet18", source="github"),
        lambda: hub.list("pytorch/vision"),
        lambda: hub.help("pytorch/vision", "resnet18"),
    ):
        with pytest.raises(RuntimeError, match="supports only local hub repos"):
            call()
    # a local directory works with list and help (it has a hubconf.py)
    assert hub.list(str(repo)) == ["needs_missing", "tiny"]
    assert hub.help(str(repo), "tiny") == "A vector of ones times scale."


# -- against PyTorch's own torch.load -----------------------------------------------------


def _torch_object(torch):
    """What tests/data/torch_checkpoint*.pt hold."""
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4
    sd = collections.OrderedDict(
        w=w,
        wt=w.t(),
        row=w[1],
        p=torch.nn.Parameter(torch.tensor([1.0, -2.0])),
        h=torch.tensor([1.5, -2.0], dtype=torch.float16),
        i8=torch.tensor([-128, 127], dtype=torch.int8),
        n=torch.tensor(7),
        b=torch.tensor([True, False]),
    )
    sd._metadata = {"": {"version": 1}}
    return {
        "model": sd,
        "extra": [w[:, 1:], {"k": torch.tensor(2.5, dtype=torch.float64)}],
        "step": 3,
    }


_WIDENED = {"int8", "int16", "uint8"}


def _compare(torch, ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, numbagrad.Tensor)
        assert isinstance(ours, numbagrad.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
        name = str(theirs.dtype).removeprefix("torch.")
        want = "int64" if name in _WIDENED else name
        assert ours.dtype is getattr(numbagrad, want), (ours.dtype, theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride()
        assert ours.storage_offset() == theirs.storage_offset()
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        assert getattr(ours, "_metadata", None) == getattr(theirs, "_metadata", None)
        for k in theirs:
            _compare(torch, ours[k], theirs[k])
    elif isinstance(theirs, torch.Size):
        assert type(ours) is numbagrad.Size and ours == tuple(theirs)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _compare(torch, a, b)
    elif isinstance(theirs, torch.dtype):
        assert ours is getattr(numbagrad, str(theirs).removeprefix("torch."))
    elif isinstance(theirs, torch.device):
        assert ours == numbagrad.device(str(theirs))
    elif isinstance(theirs, float) and math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def test_committed_files_match_torch_load():
    torch = pytest.importorskip("torch")
    for path in (TORCH_ZIP, TORCH_LEGACY):
        _compare(torch, numbagrad.load(path), torch.load(path))
    ref = _torch_object(torch)
    _compare(torch, numbagrad.load(TORCH_ZIP), ref)


def _name(dt):
    return str(dt).removeprefix("torch.")


def _all_dtypes_object(torch):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(4, 5, generator=g)
    sd = collections.OrderedDict()
    for dt in (torch.float16, torch.float32, torch.float64):
        x = base.to(dt)
        sd[_name(dt)] = x
        sd[f"{_name(dt)}.t"] = x.t()
        sd[f"{_name(dt)}.cols"] = x[1:, ::2]
    ints = torch.tensor([[-3, 0, 5], [100, -100, 7]])
    for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        x = ints.to(dt) if dt is not torch.uint8 else ints.abs().to(dt)
        sd[_name(dt)] = x
        sd[f"{_name(dt)}.t"] = x.t()
        sd[f"{_name(dt)}.row"] = x[1]
    sd["bool"] = ints > 0
    sd["scalar"] = torch.tensor(3.25)
    sd["empty"] = torch.zeros(0, 3)
    sd["extremes"] = torch.tensor([2**62, -(2**62)])
    sd["inf"] = torch.tensor([math.inf, -math.inf, math.nan])
    lin = torch.nn.Linear(3, 2)
    sd["param"] = lin.weight
    sd["frozen"] = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    sd["rg"] = torch.ones(2, requires_grad=True)
    return {
        "sd": sd,
        "module": lin.state_dict(),
        "nested": [{"a": (base[0], base[1:3])}, [ints, 1.5, "s", None, True]],
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "size": torch.Size([2, 3]),
        "set": {1, 2},
        "bytes": b"\x00\x01",
    }


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_generated_torch_checkpoints_match_torch_load(tmp_path, legacy, weights_only):
    torch = pytest.importorskip("torch")
    obj = _all_dtypes_object(torch)
    path = tmp_path / "all.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    ours = numbagrad.load(path, weights_only=weights_only)
    _compare(torch, ours, torch.load(path, weights_only=weights_only))
    sd = ours["sd"]
    sd["float32"][0, 1] = 42.0  # views of one storage share it
    assert sd["float32.t"][1, 0].item() == 42.0
    sd["int8"][1, 0] = 11  # widened storages too
    assert sd["int8.row"][0].item() == 11 and sd["int8.t"][0, 1].item() == 11
    # a loaded state_dict goes into a numbagrad module, and round-trips through numbagrad.save
    lin = numbagrad.nn.Linear(3, 2)
    lin.load_state_dict(ours["module"])
    np.testing.assert_array_equal(lin.weight.detach().numpy(), obj["module"]["weight"].numpy())
    again = numbagrad.load(io.BytesIO(_saved(ours["sd"])))
    assert again["float32.t"].stride() == (1, 5) and again["float32.t"][1, 0].item() == 42.0


def test_torch_objects_numbagrad_refuses(tmp_path):
    torch = pytest.importorskip("torch")
    p = tmp_path / "x.pt"
    torch.save(torch.nn.Linear(2, 2), p)
    for wo in (True, False):
        with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.linear\.Linear"):
            numbagrad.load(p, weights_only=wo)
    torch.save({"w": torch.ones(2, dtype=torch.bfloat16)}, p)
    with pytest.raises(RuntimeError, match="BFloat16Storage"):
        numbagrad.load(p)
    torch.save({"c": torch.tensor([1 + 2j, -1j], dtype=torch.complex64)}, p)  # (complex loads)
    assert numbagrad.load(p)["c"].tolist() == [1 + 2j, -1j]
    torch.save({"args": argparse.Namespace(lr=0.5), "w": torch.ones(1)}, p)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL argparse\.Namespace"):
        numbagrad.load(p)
    assert numbagrad.load(p, weights_only=False)["args"].lr == 0.5
    with numbagrad.serialization.safe_globals([argparse.Namespace]):
        assert numbagrad.load(p)["args"].lr == 0.5
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, str(p))
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        numbagrad.load(p)


def test_torch_checkpoint_over_http_matches_torch(server, tmp_path):
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    obj = _all_dtypes_object(torch)
    torch.save(obj, buf)
    data = buf.getvalue()
    name = f"/all-{_sha(data)[:12]}.pth"
    server.files[name] = data
    ours = hub.load_state_dict_from_url(server.url(name), str(tmp_path), check_hash=True)
    theirs = torch.hub.load_state_dict_from_url(
        server.url(name), str(tmp_path / "torch"), check_hash=True, progress=False
    )
    _compare(torch, ours, theirs)
    assert server.requests[name] == 2
