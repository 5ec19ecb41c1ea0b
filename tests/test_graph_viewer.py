"""numbagrad.autograd.graph.to_dot: the backward graph as Graphviz DOT."""

import os
import stat

import pytest

import numbagrad
from numbagrad.autograd.graph import DotGraph, to_dot


def _graph():
    x = numbagrad.ones(3, requires_grad=True)
    w = numbagrad.ones(3, 3, dtype=numbagrad.float64, requires_grad=True)
    y = (w @ x.double()).tanh().sum()
    return x, w, y


def test_nodes_edges_names_shapes_and_saved_tensors():
    x, w, y = _graph()
    dot = to_dot(y, params={"x": x, "w": w})
    assert isinstance(dot, DotGraph) and dot.startswith("digraph backward {")
    for text in (
        "SumBackward0",
        "TanhBackward0",
        "MvBackward0",  # w @ x with a 1-D x, as PyTorch names it
        "saved: its output",
        "saved: (3, 3) float64",
        "x\\n(3,) float32",
        "w\\n(3, 3) float64",
        "output 0\\n() float64",
    ):
        assert text in dot, text
    # one edge per next_functions entry, every node declared once
    labels = [line for line in dot.splitlines() if "[label=" in line]
    assert len(labels) == len({line.split()[0] for line in labels})
    assert dot.count("->") == len([line for line in dot.splitlines() if "->" in line])


def test_several_outputs_shared_history_and_no_saved():
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    a, b = h.sum(), (h * 2).sum()
    dot = to_dot([a, b], show_saved=False)
    assert dot.count("ExpBackward0") == 1  # the shared node is drawn once
    assert "o0" in dot and "o1" in dot and "saved:" not in dot
    assert dot.count("AccumulateGrad") == 0  # unnamed leaves are labelled by shape
    assert "(2,) float32" in dot


def test_leaf_output_and_errors():
    x = numbagrad.ones(2, requires_grad=True)
    assert "fillcolor=lightblue" in to_dot(x, params={"x": x})
    with pytest.raises(TypeError, match="expects tensors"):
        to_dot([x, 3])


def test_to_svg_uses_the_dot_program(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho '<svg>rendered</svg>'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)  # force the program
    _, _, y = _graph()
    assert to_dot(y).to_svg().strip() == "<svg>rendered</svg>"


def test_to_svg_without_graphviz_says_how_to_get_it(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)
    _, _, y = _graph()
    with pytest.raises(RuntimeError, match="needs Graphviz"):
        to_dot(y).to_svg()
    assert to_dot(y)._repr_svg_() is None
