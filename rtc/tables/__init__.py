"""Existing rank tables, the second front end: load them with positions (:mod:`.jsonload`),
recognise their form (:mod:`.recognise`), schema-validate them (:mod:`rtc.schema`), check
what only a table can get wrong (:mod:`.semantic`), lower them into the same Topology the
compiler builds (:mod:`.lower_table`), and describe them in the rtc language
(:mod:`.importer`).

Typical use::

    doc, smap, diags = load_json(Path("hccl.json"))
    if doc is not None:
        form, more = detect_form(doc, source_map=smap)
        diags += more
        if form:
            diags += validate_document(doc, form, source_map=smap)

or simply :func:`check_file`. Rule ids RTC600-RTC609 and RTC630-RTC679 belong to this
package (RTC600-604 loading, RTC605-609 form detection, RTC630+ table rules and import);
RTC610-619 to the schema service. The whole ``rtc validate`` pipeline, which also runs the
compiler's checks on the lowered table, is :func:`rtc.api.validate_source`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Union

from rtc.diagnostics import Diagnostic, has_errors, sorted_diagnostics

from rtc.schema import (FORM_DESCRIPTIONS, FORMS, FastValidator, Finding, check_schema,
                        format_path, parse_path, schema_errors, schema_for, validate_document)

from .recognise import detect_form
from .jsonload import SourceMap, load_json

__all__ = [
    "FORMS",
    "FORM_DESCRIPTIONS",
    "TableCheck",
    "SourceMap",
    "check_file",
    "check_schema",
    "detect_form",
    "FastValidator",
    "Finding",
    "format_path",
    "load_json",
    "parse_path",
    "schema_errors",
    "schema_for",
    "validate_document",
]


@dataclass
class TableCheck:
    """Result of :func:`check_file`: the parsed document (None if unparsable), its source
    map, the form it was checked as (None if none), and all diagnostics sorted by location."""

    doc: object
    source_map: SourceMap
    form: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def check_file(source: Union[str, bytes, os.PathLike], *, filename: str | None = None,
               schema: str | None = None) -> TableCheck:
    """Load, detect and schema-validate a rank table in one call.

    ``source`` as for :func:`load_json` (a ``str`` is JSON text, a ``Path`` is a file);
    ``schema`` forces a form (the CLI's ``--schema``)."""
    doc, smap, diags = load_json(source, filename=filename)
    form = None
    if doc is not None:
        form, more = detect_form(doc, override=schema, source_map=smap)
        diags.extend(more)
        if form is not None:
            diags.extend(validate_document(doc, form, source_map=smap))
    return TableCheck(doc, smap, form, sorted_diagnostics(diags))
