"""L-BFGS with an optional strong-Wolfe line search (``torch.optim.LBFGS``).

The algorithm is PyTorch's (itself after Mark Schmidt's minFunc): the two-loop recursion
over at most ``history_size`` curvature pairs, the first step scaled by
``min(1, 1 / |g|_1)``, and a strong-Wolfe line search that brackets a step by cubic
interpolation and then zooms into the bracket. It works on one flat float array holding
every parameter (the gradients gathered in parameter order), in the parameters' dtype.
"""

from __future__ import annotations

import numpy as np

from numbagrad._core.grad_mode import enable_grad, no_grad
from numbagrad._tensor import Tensor
from numbagrad.optim.optimizer import Optimizer, _check_lr, _lr_value

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``
    (by default the interval between x1 and x2); its midpoint when the cubic has none."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    # Nocedal and Wright, eq. 3.59
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along ``d`` from step ``t`` for a step meeting the strong Wolfe
    conditions (sufficient decrease ``c1``, curvature ``c2``); returns
    ``(f_new, g_new, t, evaluations)``. ``obj_func(x, t, d)`` gives the loss and flat
    gradient at ``x + t d``."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracketing phase: grow the step until an interval holds a point meeting the conditions
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate between 1.01 t and 10 t
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # no bracket found: the last point against the start
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: shrink the bracket by cubic interpolation until the conditions hold
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # a point too close to an end makes little progress: move it 10% of the width
        # inside, after one such step, or at once when it falls on or beyond an end
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # sufficient decrease fails or no better than the low end: new high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # strong Wolfe conditions met
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the slope points away from the high end: the old low end becomes high
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _wrap(a):
    """State arrays are kept as Tensors, as in PyTorch's state dicts."""
    return None if a is None else Tensor._make(a)


def _unwrap(t):
    return None if t is None else t._data


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's ``torch.optim.LBFGS``): a quasi-Newton method for smooth,
    deterministic objectives, the usual choice to fit a model's parameters to data.

    ``step(closure)`` runs up to ``max_iter`` iterations, calling ``closure`` (which must
    clear the gradients, compute the loss, call ``backward`` and return the loss) at least
    once per iteration; it returns the loss of the first evaluation. One parameter group
    only. Memory: ``history_size + 2`` copies of all parameters.

    Parameters
    ----------
    params : iterable
        Tensors to optimize (one group).
    lr : float, default 1
        Step length (the line search's first trial step after the first iteration).
    max_iter : int, default 20
        Iterations per ``step``.
    max_eval : int, optional
        Closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
    tolerance_grad : float, default 1e-7
        Stop when the largest gradient entry is at most this.
    tolerance_change : float, default 1e-9
        Stop when the loss or the parameters change by less than this.
    history_size : int, default 100
        Curvature pairs kept.
    line_search_fn : {None, 'strong_wolfe'}, default None
        Without a line search each iteration takes the step ``lr`` (scaled at the first).

    Raises
    ------
    ValueError
        For a negative ``lr`` or several parameter groups.
    RuntimeError
        From ``step`` for a ``line_search_fn`` other than ``'strong_wolfe'``.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([-1.5, 2.0], dtype=numbagrad.float64, requires_grad=True)
    >>> opt = numbagrad.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=100)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]
    [1.0, 1.0]
    """

    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
    ):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        if any(p.is_complex() for p in self._params):
            raise NotImplementedError(
                "LBFGS does not support complex parameters in numbagrad yet; optimize the "
                "real and imaginary parts as two real tensors, or use another optimizer"
            )
        if any(p.is_cuda for p in self._params):  # its line search reads host arrays
            raise NotImplementedError(
                "LBFGS is not implemented for CUDA parameters yet; optimize the model on the "
                "CPU, or use SGD, Adam, AdamW, RMSprop or Adagrad, which step on the device"
            )
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """All gradients in one new flat array (zeros for a parameter without one)."""
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(np.zeros(p._data.size, p._data.dtype))
            else:
                views.append(p.grad._data.reshape(-1))
        return np.concatenate(views)

    def _add_grad(self, step_size, update):
        """``p += step_size * update[slice of p]`` for every parameter, in place."""
        offset = 0
        for p in self._params:
            data = p._data
            n = data.size
            data += data.dtype.type(step_size) * update[offset : offset + n].reshape(data.shape)
            p._storage[1] += 1
            offset += n
        if offset != self._numel():
            raise RuntimeError(
                f"LBFGS: the parameters hold {offset} elements, not the "
                f"{self._numel()} seen at the first step; do not resize them"
            )

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._storage[1] += 1

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations.

        Parameters
        ----------
        closure : callable
            Clears the gradients, computes the loss, calls ``backward`` and returns the
            loss; called under ``enable_grad``.

        Returns
        -------
        The loss of the first closure call.
        """
        if closure is None:
            raise RuntimeError(
                "LBFGS.step needs a closure that re-evaluates the loss and its "
                "gradient: opt.step(closure)"
            )
        with no_grad():
            return self._step(closure)

    def _step(self, user_closure):
        def closure():
            with enable_grad():
                return user_closure()

        group = self.param_groups[0]
        lr = _lr_value(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # the state lives with the first parameter, as in PyTorch
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d = _unwrap(state.get("d"))
        t = state.get("t")
        old_dirs = [y._data for y in state.get("old_dirs") or []]
        old_stps = [s._data for s in state.get("old_stps") or []]
        ro = list(state.get("ro") or [])
        h_diag = state.get("H_diag")
        prev_flat_grad = _unwrap(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                # curvature pair of the last step; kept only if it is positive enough
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)  # initial Hessian guess, Nocedal-Wright 7.20
                # two-loop recursion: d = -H g
                num_old = len(old_dirs)
                al = [None] * num_old
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += (-al[i]) * old_dirs[i]
                d = r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate unless this is the last iteration (the caller's next
                    # step does it)
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _wrap(d)
        state["t"] = t
        state["old_dirs"] = [_wrap(y) for y in old_dirs]
        state["old_stps"] = [_wrap(s) for s in old_stps]
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = _wrap(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
