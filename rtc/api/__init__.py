"""The library entry points, one module per command:

* :mod:`rtc.api.compile` - compile a description: :func:`compile_text`,
  :func:`compile_file`, :func:`rank_table`, :func:`topology_files` (exported here);
* :mod:`rtc.api.validate` - validate an existing rank table: ``validate_source``;
* :mod:`rtc.api.importing` - turn a table into a description: ``import_table``.

Only the compile driver is imported with the package, so that ``rtc compile`` does not load
the JSON front end.
"""

from rtc.api.compile import (STAGES, CompileResult, compile_file, compile_text, rank_table,
                             topology_files)

__all__ = ["STAGES", "CompileResult", "compile_file", "compile_text", "rank_table",
           "topology_files"]
