"""Parsing stage: text -> generic AST (:mod:`rtc.syntax.ast`) -> typed declarations
(:mod:`rtc.syntax.schema`). No lark types leak past :mod:`rtc.syntax.parser`."""

from rtc.syntax.parser import parse_text

__all__ = ["parse_text"]
