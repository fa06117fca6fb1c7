"""Emitters: they read only the checked Topology (never the AST) and return text or data;
writing files is :func:`rtc.outputs.files.write_atomic`'s job."""
