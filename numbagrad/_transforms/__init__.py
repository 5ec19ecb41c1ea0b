"""The transforms' machinery, between the ops and the public APIs (NOTE [Layers]):
tracers (NOTE [Tracers]), the forward-mode, vmap and ``func.grad`` interpreters, and the
pytree helpers. Users reach it through ``numbagrad.func`` and
``numbagrad.autograd.forward_ad``."""

__all__: list = []
