"""PyTorch's public names per namespace against numbagrad's (issue 27): the record in
``tests/data/missing_names.json`` and the code that makes it.

Regenerate the record (needs torch) after adding or removing a PyTorch name::

    python tests/_torch_names.py            # writes the file, prints the coverage table

A namespace's public names are those ``dir()`` lists without a leading underscore, less
the modules from outside torch it imported (``os``, ``math``) and the names of ``typing``
it imported (``Any``, ``TYPE_CHECKING``). numbagrad "has" a name when ``hasattr`` finds it
on the matching numbagrad namespace.
"""

import importlib
import json
import pathlib
import sys
import types

RECORD = pathlib.Path(__file__).resolve().parent / "data" / "missing_names.json"

# PyTorch's namespace -> numbagrad's
NAMESPACES = {
    "torch": "numbagrad",
    "torch.Tensor": "numbagrad.Tensor",
    "torch.autograd": "numbagrad.autograd",
    "torch.utils.data": "numbagrad.utils.data",
    "torch.distributions": "numbagrad.distributions",
    "torch.nn": "numbagrad.nn",
    "torch.nn.functional": "numbagrad.nn.functional",
    "torch.linalg": "numbagrad.linalg",
    "torch.special": "numbagrad.special",
    "torch.optim": "numbagrad.optim",
    "torch.func": "numbagrad.func",
    "torch.cuda": "numbagrad.cuda",
    "torch.accelerator": "numbagrad.accelerator",
}

_TYPING = {"typing", "typing_extensions", "collections.abc"}


def resolve(path):
    """The module (or class: ``torch.Tensor``) named by ``path``."""
    try:
        return importlib.import_module(path)
    except ImportError:
        head, _, attr = path.rpartition(".")
        return getattr(importlib.import_module(head), attr)


def public_names(obj, package):
    """The public names of namespace ``obj`` (the module docstring's rule)."""
    out = []
    for name in dir(obj):
        if name.startswith("_") or name == "TYPE_CHECKING":
            continue
        value = getattr(obj, name, None)
        if isinstance(value, types.ModuleType) and not value.__name__.startswith(package):
            continue
        if getattr(value, "__module__", None) in _TYPING:
            continue
        out.append(name)
    return sorted(out)


def has(obj, name):
    try:
        return hasattr(obj, name)
    except Exception:  # a property or __getattr__ that refuses counts as absent
        return False


def compute():
    """The record, from the torch and numbagrad imported here."""
    import torch

    spaces = {}
    for theirs, ours in NAMESPACES.items():
        names = public_names(resolve(theirs), "torch")
        mine = resolve(ours)
        spaces[theirs] = {
            "numbagrad": ours,
            "have": [n for n in names if has(mine, n)],
            "missing": [n for n in names if not has(mine, n)],
        }
    return {
        "about": "PyTorch's public names per namespace: those numbagrad has and those it "
        "lacks. Regenerate with: python tests/_torch_names.py",
        "torch_version": torch.__version__,
        "namespaces": spaces,
    }


def load():
    return json.loads(RECORD.read_text())


def table(record):
    """The coverage table (have/total per namespace) as text."""
    rows = ["| namespace | have | total | coverage |", "|---|---:|---:|---:|"]
    th = tt = 0
    for ns, entry in record["namespaces"].items():
        h, t = len(entry["have"]), len(entry["have"]) + len(entry["missing"])
        th, tt = th + h, tt + t
        rows.append(f"| {ns} | {h} | {t} | {100 * h / t:.0f}% |")
    rows.append(f"| all | {th} | {tt} | {100 * th / tt:.0f}% |")
    return "\n".join(rows)


def main():
    sys.path.insert(0, str(RECORD.parent.parent.parent))  # this checkout's numbagrad
    record = compute()
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    print(f"wrote {RECORD}")
    print(table(record))


if __name__ == "__main__":
    main()
