"""Op database entries for the extra elementwise, scan and utility functions at the top level
(joined into ``_opdb.op_db``)."""

from _opdb import OpInfo, SampleInput, real  # noqa: F401

op_db = []
