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
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []
default_role = "py:obj"

# api.rst lists every object explicitly with autofunction/autoclass; the autosummary
# tables there only link to those entries, so no stub pages are generated.
autosummary_generate = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types

# numpydoc's automatic member tables for classes would need generated stub pages (and
# warn without them); class members are documented with :members: instead.
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

# -- sphinx-gallery -----------------------------------------------------------------------
# The examples are rendered as a gallery but never executed while building the docs:
# they JIT-compile kernels and some run for seconds, and CI already runs them. Each
# example needs a module docstring whose first paragraph is an RST title, and
# examples/ needs a GALLERY_HEADER.rst.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "plot_gallery": "False",
    "filename_pattern": r"/plot_",
    # Helper modules (leading underscore) are imported by examples, not examples.
    "ignore_pattern": r"(__init__|[\\/]_\w+)\.py$",
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("numbagrad",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    # Nothing is executed, so timing pages would be empty (and written into docs/).
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
