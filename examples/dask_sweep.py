r"""
A parameter sweep on Dask: relaxing Lennard-Jones clusters from many random starts
==================================================================================

Many independent optimisations (restarts, ensembles, hyper-parameter grids) need no
communication at all: each is one task for a ``dask.distributed`` cluster. Here each task
relaxes a Lennard-Jones cluster from its own random start by gradient descent, with the
energy and its gradient computed by a custom :class:`numbagrad.autograd.Function` whose
forward and backward are ``@numba.njit`` kernels. The Function, its kernels and the
tensors a task returns pickle to and from the workers.

Numba compiles each kernel once per worker process: the first task on a worker compiles
(or loads the on-disk cache, ``cache=True``) and every later task on that worker reuses
the compiled code, which the table below shows (column ``compiled``).

By default the sweep runs on a :class:`~dask.distributed.LocalCluster` of two worker
processes; change the one line ``SCHEDULER = None`` to a scheduler's address (for instance
``"tcp://scheduler-host:8786"``) to run the same sweep on a real cluster. It prints the
results and the wall time against a serial loop over the same starts. Needs
``pip install "dask[distributed]"``.
"""

import argparse
import os
import time

import numba
import numpy as np

import numbagrad
from numbagrad.autograd.function import once_differentiable

SCHEDULER = None  # a real cluster: SCHEDULER = "tcp://scheduler-host:8786"


@numba.njit(cache=True)
def lj_energy(pos):
    """Total Lennard-Jones energy (epsilon = sigma = 1) of the particles at ``pos``."""
    n = pos.shape[0]
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r2 = 0.0
            for k in range(3):
                d = pos[i, k] - pos[j, k]
                r2 += d * d
            sr6 = (1.0 / r2) ** 3
            total += sr6 * sr6 - sr6
    return 4.0 * total


@numba.njit(cache=True)
def lj_gradient(pos, out):
    """Write dE/dpos into ``out``."""
    n = pos.shape[0]
    out[:, :] = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r2 = 0.0
            for k in range(3):
                d = pos[i, k] - pos[j, k]
                r2 += d * d
            sr6 = (1.0 / r2) ** 3
            coef = 4.0 * (6.0 * sr6 - 12.0 * sr6 * sr6) / r2  # (dE/dr) / r
            for k in range(3):
                d = pos[i, k] - pos[j, k]
                out[i, k] += coef * d
                out[j, k] -= coef * d


class LennardJones(numbagrad.autograd.Function):
    """Cluster energy; forward and backward are the Numba kernels above."""

    @staticmethod
    def forward(positions):
        return numbagrad.tensor(lj_energy(positions.contiguous().numpy()), dtype=positions.dtype)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_energy):
        (positions,) = ctx.saved_tensors
        pos = positions.contiguous().numpy()
        grad = np.empty_like(pos)
        lj_gradient(pos, grad)
        return numbagrad.from_numpy(grad) * grad_energy


def random_start(seed, n_atoms):
    """Random positions in a ball, no two particles closer than 0.9 (rejection sampling)."""
    rng = np.random.default_rng(seed)
    radius = 0.75 * n_atoms ** (1 / 3)
    pos = []
    while len(pos) < n_atoms:
        p = rng.uniform(-radius, radius, 3)
        if p @ p <= radius * radius and all(np.sum((p - q) ** 2) >= 0.81 for q in pos):
            pos.append(p)
    return np.array(pos)


def relax(seed, n_atoms=13, steps=400, lr=2e-3, max_step=0.05):
    """Relax one random start by capped gradient descent; one task of the sweep."""
    compiled = not lj_energy.signatures  # no compiled code in this process yet
    t0 = time.perf_counter()
    x = numbagrad.from_numpy(random_start(seed, n_atoms)).requires_grad_(True)
    for _ in range(steps):
        energy = LennardJones.apply(x)
        x.grad = None
        energy.backward()
        with numbagrad.no_grad():
            step = lr * x.grad
            norm = float(step.abs().max())
            if norm > max_step:  # cap the displacement: a close pair has huge forces
                step = step * (max_step / norm)
            x -= step
    final = float(LennardJones.apply(x.detach()))
    return {
        "seed": seed,
        "energy": final,
        "positions": x.detach(),
        "max_force": float(x.grad.abs().max()),
        "worker": os.getpid(),
        "compiled": compiled,
        "seconds": time.perf_counter() - t0,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--starts", type=int, default=24, help="number of random starts")
    parser.add_argument("--atoms", type=int, default=13)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    seeds = list(range(args.starts))
    t0 = time.perf_counter()
    serial = [relax(s, args.atoms, args.steps) for s in seeds]
    t_serial = time.perf_counter() - t0

    if SCHEDULER is None:
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    else:
        cluster, client = None, Client(SCHEDULER)
    try:
        client.wait_for_workers(1, timeout=120)
        t0 = time.perf_counter()
        futures = client.map(relax, seeds, n_atoms=args.atoms, steps=args.steps, pure=False)
        results = client.gather(futures)
        t_dask = time.perf_counter() - t0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    print(
        f"{'seed':>4} {'energy':>11} {'max |force|':>11} {'worker':>8} {'compiled':>8} "
        f"{'seconds':>8}"
    )
    for r in sorted(results, key=lambda r: r["energy"]):
        print(
            f"{r['seed']:4d} {r['energy']:11.5f} {r['max_force']:11.2e} {r['worker']:8d} "
            f"{r['compiled']!s:>8} {r['seconds']:8.3f}"
        )
    for r, s in zip(results, serial):  # the same answers as the serial loop, bit for bit
        assert r["energy"] == s["energy"], (r["seed"], r["energy"], s["energy"])
        assert np.array_equal(r["positions"].numpy(), s["positions"].numpy())
    workers = {r["worker"] for r in results}
    compiles = sum(r["compiled"] for r in results)
    assert compiles <= len(workers), "a worker compiled the kernels more than once"
    best = min(results, key=lambda r: r["energy"])
    print(
        f"lowest energy {best['energy']:.5f} (seed {best['seed']}; the 13-atom global "
        f"minimum is -44.32680)"
    )
    print(
        f"{len(seeds)} relaxations: serial {t_serial:.2f} s, Dask on {len(workers)} "
        f"worker(s) {t_dask:.2f} s (speed-up {t_serial / t_dask:.2f}x); kernels compiled "
        f"or loaded {compiles} time(s), once per worker at most"
    )
    return results


if __name__ == "__main__":
    main()
