"""NumPy interplay of analysis scripts: ``as_tensor``/``from_numpy`` memory sharing,
``np.asarray(tensor)``, ``tolist``, ``float(t)``, NumPy index arrays and boolean masks,
``nonzero(as_tuple=True)``, single-argument ``torch.where``, ``torch.tensor`` of NumPy
scalars, and reductions returning named tuples."""

import numpy as np
import torch


def main():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = torch.from_numpy(a)
    a[0, 0] = -5.0  # shared memory
    s = torch.as_tensor(a)
    idx = np.array([2, 0])
    rows = t[idx]
    mask = t > 4
    picked = t[mask]
    r, c = mask.nonzero(as_tuple=True)
    wr, wc = torch.where(t < 2)
    scalars = torch.tensor([np.float64(1.5), np.float32(2.0), 3])
    mx = t.max(dim=1)
    srt = torch.sort(t, dim=0, descending=True)
    med = t.median(dim=1)
    arr = np.asarray(t * 2)
    return {
        "t00": float(t[0, 0]),
        "same": float(s.data_ptr() == t.data_ptr()),
        "rows": rows,
        "picked": picked,
        "r": r,
        "c": c,
        "wr": wr,
        "wc": wc,
        "scalars": scalars,
        "scalars_dtype64": float(scalars.dtype == torch.float64),
        "mx_values": mx.values,
        "mx_indices": mx.indices,
        "srt": srt.values,
        "srt_idx": srt.indices,
        "med": med.values,
        "med_idx": med[1],
        "arr": arr,
        "list_sum": float(sum(sum(row) for row in t.tolist())),
        "topk": torch.topk(t.flatten(), 3).indices,
        "cumsum": t.cumsum(1),
        "quantile": torch.quantile(t, 0.3, dim=1),
        "std": t.std(dim=0, unbiased=True),
    }
