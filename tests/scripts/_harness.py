"""Run drop-in acceptance scripts with real PyTorch or with numbagrad standing in for ``torch``.

Usage (one subprocess per script on the numbagrad side, so the substitution cannot leak)::

    python _harness.py numbagrad OUT.pkl SCRIPT.py
    python _harness.py torch OUT.pkl SCRIPT.py [SCRIPT.py ...]

Each script defines ``main()`` returning a dict of floats, tensors or arrays. The harness
converts every value to a NumPy array (keeping its dtype) and pickles
``{script_name: {"ok": True, "result": {...}, "tolerance": {...}}}`` or
``{"ok": False, "error": traceback}``. A script may define ``TOLERANCE = {key: (rtol, atol)}``
for results that legitimately differ more than the default tolerances.
"""

import importlib
import importlib.abc
import importlib.util
import os
import pickle
import runpy
import sys
import traceback


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook: ``torch`` -> ``numbagrad``, ``torch.<sub>`` -> ``numbagrad.<sub>``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        target = "numbagrad" + spec.name[len("torch") :]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name is not None and exc.name.startswith("numbagrad"):
                raise ModuleNotFoundError(
                    f"No module named {spec.name!r} (numbagrad has no {target!r})", name=spec.name
                ) from None
            raise

    def exec_module(self, module):
        pass


def install_alias():
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        raise RuntimeError(f"real torch module {name!r} already imported")
    sys.meta_path.insert(0, TorchAlias())


def to_numpy(value):
    import numpy as np

    if hasattr(value, "detach"):
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        return np.array(value.numpy(), copy=True)
    if isinstance(value, (list, tuple)):
        return np.asarray([to_numpy(v) for v in value])
    return np.asarray(value)


def run_script(path):
    try:
        module = runpy.run_path(path, run_name="__acceptance__")
        raw = module["main"]()
        if not isinstance(raw, dict):
            raise TypeError(f"main() must return a dict, got {type(raw).__name__}")
        return {
            "ok": True,
            "result": {k: to_numpy(v) for k, v in raw.items()},
            "tolerance": dict(module.get("TOLERANCE", {})),
        }
    except BaseException:  # the traceback is the result
        return {"ok": False, "error": traceback.format_exc()}


def main(argv):
    mode, out, scripts = argv[0], argv[1], argv[2:]
    if mode == "numbagrad":
        install_alias()
    elif mode != "torch":
        raise SystemExit(f"unknown mode {mode!r}")
    results = {}
    for path in scripts:
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        results[os.path.basename(path)] = run_script(path)
        sys.path.pop(0)
        if mode == "torch":  # scripts set the default dtype; do not let it reach the next one
            sys.modules["torch"].set_default_dtype(sys.modules["torch"].float32)
    with open(out, "wb") as fh:
        pickle.dump(results, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
