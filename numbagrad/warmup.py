"""``python -m numbagrad.warmup``: compile numbagrad's CPU kernels into Numba's cache.

Run it once where the compile cache is kept (next to the installed package, or in
``NUMBA_CACHE_DIR``), for instance while building a container image; later processes
then load the kernels instead of compiling them on first use.
"""

from __future__ import annotations

import argparse
import sys

from numbagrad._observe import precompile

__all__ = ["main", "precompile"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m numbagrad.warmup", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="do not list the kernels as they compile"
    )
    args = parser.parse_args(argv)
    seconds = precompile(verbose=not args.quiet)
    import numba

    where = numba.config.CACHE_DIR or "next to the numbagrad package (__pycache__)"
    print(f"numbagrad kernels compiled in {seconds:.1f} s; cache: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
