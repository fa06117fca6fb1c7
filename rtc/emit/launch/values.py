"""Value parsers for the launch attributes of the language (used by
:data:`rtc.syntax.schema.BLOCK_SPECS`).

* ``args "--max-model-len 8192 --trust-remote-code"`` -> a tuple of argv words: a quoted
  string is split like a POSIX shell splits it (``shlex``), a bare word is one argument;
  several words and strings on one line are concatenated;
* ``prefill prefill-a, prefill-b`` (``disaggregation`` block) -> a tuple of job-name
  :class:`~rtc.syntax.ast.Word` s.

They raise :class:`~rtc.syntax.values.ValueProblem` with the syntax-stage rule id RTC114
(bad value), like every other literal error.
"""

from __future__ import annotations

import shlex

from rtc.syntax.ast import Assign, Attribute, ListArg, Word
from rtc.syntax.values import ValueProblem

_BAD_VALUE = "RTC114"


def p_args(attr: Attribute) -> tuple[str, ...]:
    out: list[str] = []
    for a in attr.args:
        if isinstance(a, Assign):
            raise ValueProblem(_BAD_VALUE, f"'{attr.key}' does not take `NAME = value`; quote "
                               "arguments with '=' in them", a.span,
                               f'write e.g. `{attr.key} "--foo=bar"`')
        items = a.items if isinstance(a, ListArg) else (a,)
        for w in items:
            if w.quoted:
                try:
                    out.extend(shlex.split(w.text))
                except ValueError as exc:
                    raise ValueProblem(_BAD_VALUE, f"'{attr.key}': {exc} in \"{w.text}\"", w.span,
                                       "close every quote inside the string")
            else:
                out.append(w.text)
    if not out:
        raise ValueProblem(_BAD_VALUE, f"'{attr.key}' is empty", attr.span,
                           f'write e.g. `{attr.key} "--max-model-len 8192"`')
    return tuple(out)


def p_job_refs(attr: Attribute) -> tuple[Word, ...]:
    out: list[Word] = []
    for a in attr.args:
        if isinstance(a, Assign):
            raise ValueProblem(_BAD_VALUE, f"'{attr.key}' takes job names", a.span,
                               f"write `{attr.key} JOB` or `{attr.key} JOB, JOB`")
        out.extend(a.items if isinstance(a, ListArg) else (a,))
    if len(attr.args) > 1:
        raise ValueProblem(_BAD_VALUE, f"separate the job names of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple(out)
