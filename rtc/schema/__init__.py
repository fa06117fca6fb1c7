"""The JSON Schema service, used by the JSON front end (:mod:`rtc.tables`) to check existing
tables and by the emitters to check every table and plan rtc writes.

* :mod:`.forms` - the rank table forms and their schemas (``schemas/*.schema.json``);
* :mod:`.validator` - compiled, exact schema predicates (:func:`schema_errors`);
* :mod:`.explain` - findings in rank-table terms (RTC610-RTC619, :func:`check_schema`,
  :func:`validate_document`);
* :mod:`.paths` - JSON paths (:func:`format_path`, :func:`parse_path`).
"""

from rtc.schema.explain import Finding, check_schema, validate_document
from rtc.schema.forms import FORM_DESCRIPTIONS, FORMS, schema_for
from rtc.schema.paths import JsonPath, format_path, parse_path
from rtc.schema.validator import FastValidator, SchemaError, schema_errors

__all__ = ["FORMS", "FORM_DESCRIPTIONS", "FastValidator", "Finding", "JsonPath", "SchemaError",
           "check_schema", "format_path", "parse_path", "schema_errors", "schema_for",
           "validate_document"]
