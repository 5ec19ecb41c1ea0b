"""Op database entries for numbagrad.nn.functional (joined into ``_opdb.op_db``)."""

from _opdb import OpInfo, SampleInput, real  # noqa: F401

op_db = []
