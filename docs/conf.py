"""Sphinx configuration for the numbagrad documentation.

Build with ``make docs`` (``sphinx-build -W -b html docs docs/_build/html``): warnings are
errors, so every page, docstring and example must be clean.
"""

import importlib.util
import os
import sys

# Document the checkout this file belongs to, even when numbagrad is not installed.
sys.path.insert(0, os.path.abspath(".."))

import numbagrad

# -- Project information ------------------------------------------------------------------
project = "numbagrad"
author = "the numbagrad developers"
copyright = "the numbagrad developers"
release = str(numbagrad.__version__)
version = ".".join(release.split(".")[:2])

# -- General configuration ----------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
default_role = "py:obj"

# One page per public name: every ``autosummary`` table with ``:toctree: generated/`` (in
# api.rst and the namespace pages) writes a stub page per entry into docs/generated/ (not
# tracked; ``make clean`` removes it), rendered with the templates in
# _templates/autosummary/ (a class page lists its own methods, as PyTorch's docs do; every
# page ends with the gallery examples that use the name, from sphinx-gallery's
# backreferences). A name is documented once: a guide that shows an object again uses
# ``:no-index:``.
autosummary_generate = True
autosummary_generate_overwrite = True
autosummary_imported_members = False
# numbagrad.Tensor and numbagrad.tensor (also Size/size-like pairs) would share a stub file
# on a case-insensitive file system (macOS, Windows); the class page gets another file name.
autosummary_filename_map = {"numbagrad.Tensor": "numbagrad.Tensor-class"}
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types

# The class template lists the members itself; numpydoc's own member tables would repeat
# them (and warn for members without a stub page).
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

# Links to Python's, Numba's, NumPy's and PyTorch's documentation. Python's and Numba's
# inventories are files in _inventories/ (see its README: Debian's documentation packages),
# so they link in every build, CI's offline one included. NumPy and PyTorch ship no
# inventory that can be had offline: theirs are fetched from their sites when the build can
# reach them (a developer's or a docs host's build), and left out, with a note, when it
# cannot (CI has no network; sphinx would otherwise warn, which -W turns into a failure).
# NUMBAGRAD_DOCS_OFFLINE=1 leaves them out without trying.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", "_inventories/python-3.11.inv"),
    "numba": ("https://numba.readthedocs.io/en/stable", "_inventories/numba-0.56.inv"),
}
_ONLINE_INVENTORIES = {
    "numpy": "https://numpy.org/doc/stable/",
    "torch": "https://docs.pytorch.org/docs/stable/",
}


def _reachable(url, timeout=3.0):
    """Whether ``url``'s objects.inv answers (a HEAD request, ``timeout`` seconds)."""
    import urllib.request

    req = urllib.request.Request(url + "objects.inv", method="HEAD")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status == 200
    except OSError:  # URLError, timeouts, refused connections: all OSError
        return False


if os.environ.get("NUMBAGRAD_DOCS_OFFLINE") != "1":
    for _name, _url in _ONLINE_INVENTORIES.items():
        if _reachable(_url):
            intersphinx_mapping[_name] = (_url, None)
        else:
            print(f"docs/conf.py: {_url} cannot be reached; {_name} names are not linked")
intersphinx_timeout = 5

# -- sphinx-gallery -----------------------------------------------------------------------
# The examples whose file names match filename_pattern are executed while the docs build
# (their printed output and matplotlib figures go into the page); dask_sweep is shown
# unexecuted (it needs dask.distributed and starts a local cluster). Every example is also
# a plain script that CI runs. The executed ones took 1.5 s together in the docs build on
# the 2-core development machine with Numba's cache warm; with an empty cache each script
# took 1.4 to 2.9 s (process start, imports and compilation included).
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"[\\/](plot_\w+|quickstart|numpy_sort)\.py$",
    # Helper modules (leading underscore) are imported by examples, not examples.
    "ignore_pattern": r"(__init__|[\\/]_\w+)\.py$",
    "image_scrapers": ("matplotlib",),
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("numbagrad",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    # An example that raises fails the build (with -W), as a failing test would.
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    # the timing pages would be written into docs/ itself
    "write_computation_times": False,
}

# -- HTML output --------------------------------------------------------------------------
if importlib.util.find_spec("pydata_sphinx_theme") is not None:
    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
    }
else:  # fall back to Sphinx's built-in theme, so `make docs` works without the extra
    html_theme = "alabaster"
    html_theme_options = {}
html_title = f"numbagrad {release}"
html_show_sourcelink = False
