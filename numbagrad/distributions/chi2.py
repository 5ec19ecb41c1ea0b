"""``torch.distributions.chi2``: :class:`Chi2`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad.distributions import constraints
from numbagrad.distributions.gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom
    (``Gamma(df / 2, 1 / 2)``).

    Examples
    --------
    >>> from numbagrad.distributions import Chi2
    >>> round(Chi2(4.0).mean.item(), 4)
    4.0
    """

    arg_constraints: ClassVar[dict] = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
