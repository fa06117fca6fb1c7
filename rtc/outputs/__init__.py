"""Writing outputs to disk, all or nothing (below the API, above the renderers).

* :mod:`rtc.outputs.files` - one file atomically (:func:`~rtc.outputs.files.write_atomic`),
  many files as one transaction into an existing folder (:func:`~rtc.outputs.files.write_all`),
  the list of outputs a folder holds (``.rtc-outputs``) and removing stale ones;
* :mod:`rtc.outputs.new_folder` - a folder that does not exist yet, made complete in a
  hidden sibling and renamed into place;
* :mod:`rtc.outputs.out_dir` - the ``--out-dir`` policy: checking the folder and its
  parents (symlinks, files among them), choosing between the two transactions, the messages
  of a failed or interrupted one, pruning the files of an earlier plan.

Nothing here renders text (that is :mod:`rtc.emit`) or prints (that is the CLI): failures
are :class:`~rtc.outputs.out_dir.OutputProblem` exceptions carrying the rule, the message
and the hint.
"""
