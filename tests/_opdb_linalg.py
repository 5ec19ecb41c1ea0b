"""Op database entries for numbagrad.linalg and the top-level linear-algebra functions (joined
into ``_opdb.op_db``)."""

from _opdb import OpInfo, SampleInput, real  # noqa: F401

op_db = []
