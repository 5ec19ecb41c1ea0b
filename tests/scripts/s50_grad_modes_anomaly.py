"""Grad-mode plumbing of evaluation and debugging code: ``@torch.no_grad()`` as a decorator,
``torch.inference_mode``, ``set_grad_enabled``, ``is_grad_enabled``, and
``detect_anomaly`` turning a NaN produced in backward into an error naming the op."""

import warnings

import torch

torch.set_default_dtype(torch.float64)


@torch.no_grad()
def evaluate(w, x):
    return (x @ w).tanh()


def main():
    w = torch.tensor([[0.5], [-1.0]], requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
    out = evaluate(w, x)
    with torch.inference_mode():
        y = (x @ w).relu()
    flags = []
    with torch.set_grad_enabled(False):
        flags.append(torch.is_grad_enabled())
        with torch.enable_grad():
            flags.append(torch.is_grad_enabled())
    flags.append(torch.is_grad_enabled())
    caught = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            a = torch.tensor([0.0, 1.0], requires_grad=True)
            b = torch.sqrt(a) * 0.0
            try:
                b.sum().backward()
            except RuntimeError as e:
                caught = str(e)
    return {
        "out": out,
        "out_requires_grad": float(out.requires_grad),
        "y": y,
        "y_requires_grad": float(y.requires_grad),
        "flags": [float(f) for f in flags],
        "anomaly_names_sqrt": float("SqrtBackward0" in caught and "nan" in caught),
    }
