"""Op database entries for numbagrad.special (special functions) (joined into ``_opdb.op_db``)."""

from _opdb import OpInfo, SampleInput, real  # noqa: F401

op_db = []
