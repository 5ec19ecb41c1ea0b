"""``numbagrad.hub``: PyTorch's ``torch.hub`` for downloading checkpoints and for loading
models from a local directory with a ``hubconf.py``.

NOTE [Hub]
The cache directory is :func:`get_dir`: the :func:`set_dir` value, else
``$NUMBAGRAD_HOME/hub``, else PyTorch's ``$TORCH_HOME/hub``, else
``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``. Without ``NUMBAGRAD_HOME`` this
is PyTorch's own cache, so a checkpoint either library downloaded is reused by the other (the
files are the bytes the URL serves). :func:`load_state_dict_from_url` keeps checkpoints in
``<hub dir>/checkpoints`` and reads them with :func:`numbagrad.load`, which reads files
written by ``torch.save`` too (NOTE [PyTorch checkpoints] in ``numbagrad/serialization.py``).

:func:`download_url_to_file` writes to ``<dst>.<random hex>.partial`` in the destination's
directory and renames it to ``dst`` only when the whole body has arrived and its SHA-256
matches ``hash_prefix``; the partial file is removed on any error (a dropped connection, a
hash mismatch, an interrupt), so ``dst`` is either complete or absent.

:func:`load`, :func:`list` and :func:`help` import ``hubconf.py`` from a local directory.
numbagrad never fetches GitHub repositories (``source='github'`` raises): clone the
repository and pass its path with ``source='local'``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

from numbagrad.serialization import load as _load

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

ENV_NUMBAGRAD_HOME = "NUMBAGRAD_HOME"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir: str | None = None


class _Faketqdm:
    """The progress bar used when tqdm is not installed: a percentage (or a byte count
    when the size is unknown) rewritten on one stderr line."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        else:
            sys.stderr.write(f"\r{self.n} bytes")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm  # type: ignore[import-untyped]  # the real bar when installed
except ImportError:
    tqdm = _Faketqdm


def _get_home():
    home = os.getenv(ENV_NUMBAGRAD_HOME) or os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    )
    return os.path.expanduser(home)


def get_dir() -> str:
    """The hub cache directory, where downloaded checkpoints are kept (in ``checkpoints/``).

    It is the directory given to :func:`set_dir`; without one, ``$NUMBAGRAD_HOME/hub``, else
    ``$TORCH_HOME/hub``, where ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch`` and
    ``$XDG_CACHE_HOME`` to ``~/.cache``: PyTorch's cache unless ``NUMBAGRAD_HOME`` is set.

    Returns
    -------
    str
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Set the hub cache directory that :func:`get_dir` returns (``~`` is expanded).

    Parameters
    ----------
    d : str or os.PathLike
        A local directory for downloaded checkpoints.
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Download the object at ``url`` to the local path ``dst``.

    The body goes to a temporary file next to ``dst`` that is renamed to ``dst`` only once
    complete and checked, so a failed or interrupted download leaves no file behind
    (NOTE [Hub] in ``numbagrad/hub.py``). ``file://`` URLs work as well as ``http(s)://``.

    Parameters
    ----------
    url : str
    dst : str
        The full path to write, e.g. ``/tmp/weights.pth``.
    hash_prefix : str, optional
        When given, the SHA-256 of the downloaded bytes must start with it; otherwise
        ``RuntimeError('invalid hash value (expected "...", got "...")')``.
    progress : bool, default True
        Show a progress bar on stderr (tqdm's when it is installed).

    Raises
    ------
    RuntimeError
        On a hash mismatch.
    http.client.IncompleteRead
        When the connection ends before the ``Content-Length`` the server announced
        (PyTorch keeps such a truncated file; numbagrad removes it).
    urllib.error.URLError
        When the URL cannot be fetched (``HTTPError`` for an error status).
    """
    import errno
    import hashlib
    import http.client
    import shutil
    import tempfile
    import uuid
    from urllib.request import Request, urlopen

    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "xb")  # closed in the finally clause below
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "numbagrad.hub"})
    try:
        with urlopen(req) as u:
            length = u.info().get_all("Content-Length")
            file_size = int(length[0]) if length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            received = 0
            with tqdm(
                total=file_size,
                disable=not progress,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
            ) as pbar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    received += len(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if file_size is not None and received != file_size:
                # urllib ends a body cut short without an error: the file would be partial
                raise http.client.IncompleteRead(b"", file_size - received)
            if sha256 is not None and hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[: len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(
                        f'invalid hash value (expected "{hash_prefix}", got "{digest}")'
                    )
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _hash_prefix_of(filename):
    """``bfd8deac`` from ``resnet18-bfd8deac.pth`` (PyTorch's HASH_REGEX)."""
    import re

    m = re.search(r"-([a-f0-9]*)\.", filename)
    return m.group(1) if m else None


def _is_legacy_zip_format(filename):
    """A zip holding one file: a legacy (PyTorch < 1.6) checkpoint zipped by hand. A
    numbagrad file holding only its manifest (``save({}, f)``) is not one."""
    import zipfile

    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return (
            len(infolist) == 1
            and not infolist[0].is_dir()
            and infolist[0].filename != "manifest.json"
        )
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    import zipfile

    warnings.warn(
        "Falling back to the old format < 1.6. This support will be deprecated in favor of "
        "default zipfile format introduced in 1.6. Please redo torch.save() to save it in "
        "the new zipfile format.",
        FutureWarning,
        stacklevel=3,
    )
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        name = members[0].filename
        root = os.path.realpath(model_dir)
        target = os.path.realpath(os.path.join(root, name))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"Unsafe path in zip file: {name!r} leaves {model_dir}")
        zf.extract(members[0], model_dir)
    return _load(target, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location=None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict:
    """Load the checkpoint at ``url``, downloading it to ``model_dir`` unless it is there.

    The file (the last part of the URL's path, or ``file_name``) is kept in ``model_dir``,
    by default ``<hub dir>/checkpoints`` (:func:`get_dir`); a file already there is loaded
    without downloading. Files written by :func:`numbagrad.save` and by ``torch.save`` (its
    zip format and its legacy format) load without PyTorch; a zip holding a single legacy
    checkpoint is extracted next to it first, as PyTorch does.

    Parameters
    ----------
    url : str
        ``http(s)://`` or ``file://``.
    model_dir : str, optional
    map_location : str, device, dict or callable, optional
        As for :func:`numbagrad.load`.
    progress : bool, default True
        Show a progress bar on stderr while downloading.
    check_hash : bool, default False
        Check the download against the hash in its file name, ``name-<sha256 prefix>.ext``
        (the first eight or more hex digits of its SHA-256).
    file_name : str, optional
        The name to store the file under (default: from the URL).
    weights_only : bool, default False
        As for :func:`numbagrad.load` (PyTorch's default here is False too; pass True for
        files you do not trust).

    Returns
    -------
    object
        What the file holds, usually a ``state_dict``.

    Examples
    --------
    >>> import numbagrad, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> numbagrad.save({"w": numbagrad.ones(2)}, d / "w.pt")
    >>> sd = numbagrad.hub.load_state_dict_from_url(
    ...     (d / "w.pt").as_uri(), model_dir=str(d / "cache"), progress=False
    ... )  # doctest: +ELLIPSIS
    Downloading: "file://.../w.pt" to .../cache/w.pt
    >>> sd["w"]
    tensor([1., 1.])
    """
    from urllib.parse import urlparse

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path)
    if file_name is not None:
        filename = file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = _hash_prefix_of(filename) if check_hash else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# -- hubconf.py from a local directory ---------------------------------------------------


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    import importlib.util

    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{repo_dir} has no {MODULE_HUBCONF}")
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(m, model):
    import importlib.util

    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(m, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [pkg for pkg in deps if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(m, model, None) if model in dir(m) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _local_repo(github, api):
    """The directory ``github`` names, for :func:`list` and :func:`help`; a GitHub
    ``owner/repo[:ref]`` raises (numbagrad does not download repositories)."""
    if isinstance(github, (str, os.PathLike)) and os.path.isfile(
        os.path.join(os.path.expanduser(github), MODULE_HUBCONF)
    ):
        return os.path.expanduser(github)
    raise _github_error(api, github)


def _github_error(api, repo):
    return RuntimeError(
        f"numbagrad.hub.{api}: numbagrad supports only local hub repos and does not "
        f"download {repo!r} from GitHub. Clone the repository and pass its directory "
        f"(numbagrad.hub.load(path, model, source='local'))."
    )


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """The entrypoints (public callables) of the ``hubconf.py`` in a local directory.

    PyTorch's ``github`` is a GitHub repository ``owner/repo[:ref]``; numbagrad does not
    download repositories, so ``github`` must be a local directory that holds a
    ``hubconf.py`` (a clone), and a repository name raises ``RuntimeError``. The other
    arguments are accepted and have no effect, as for a local directory in PyTorch.

    Returns
    -------
    list of str
    """
    repo_dir = _local_repo(github, "list")
    with _add_to_sys_path(repo_dir):
        hub_module = _import_hubconf(repo_dir)
    return [
        f for f in dir(hub_module) if callable(getattr(hub_module, f)) and not f.startswith("_")
    ]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of entrypoint ``model`` of the ``hubconf.py`` in a local directory
    (``github`` as for :func:`list`).

    Returns
    -------
    str or None
    """
    repo_dir = _local_repo(github, "help")
    with _add_to_sys_path(repo_dir):
        hub_module = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(hub_module, model).__doc__


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo="check",
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Call entrypoint ``model`` of the ``hubconf.py`` in directory ``repo_or_dir``.

    With ``source='local'`` (the only one numbagrad supports) the directory's
    ``hubconf.py`` is imported with the directory on ``sys.path``, its ``dependencies`` list
    is checked, and ``model(*args, **kwargs)`` is returned. ``source='github'`` (PyTorch's
    default) raises ``RuntimeError``: numbagrad does not download repositories; clone one
    and pass its path with ``source='local'``.

    Parameters
    ----------
    repo_or_dir : str
    model : str
        The name of a callable in ``hubconf.py``.
    *args, **kwargs
        Passed to it.
    source : {'github', 'local'}

    Returns
    -------
    object
        What the entrypoint returns.

    Raises
    ------
    ValueError
        For a source other than ``'github'`` and ``'local'``.
    RuntimeError
        For ``source='github'``, a missing dependency or a missing entrypoint.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise _github_error("load", repo_or_dir)
    with _add_to_sys_path(repo_or_dir):
        hub_module = _import_hubconf(repo_or_dir)
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)
