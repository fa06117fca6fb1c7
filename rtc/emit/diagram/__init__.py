"""Diagrams of a compiled cluster, as Graphviz DOT and rendered SVG/PNG/PDF.

Three views (``rtc diagram --view``):

* ``topology`` (:mod:`~rtc.emit.diagram.topology_view`): servers, NPUs, one kind of
  parallel group as coloured outlines, cross-server groups in the warning colour with the
  link they must use, diagnostics on the element they concern;
* ``groups`` (:mod:`~rtc.emit.diagram.groups_view`): per job, the DP x PP x PCP x TP
  grid of ranks with their server and device;
* ``network`` (:mod:`~rtc.emit.diagram.network_view`): host networks, device subnets
  and gateways, fabrics and super pods.

DOT text is deterministic (ids derived from names, declaration order, no random names),
so golden files can compare it byte for byte. Rendering runs Graphviz's ``dot`` through
the ``graphviz`` package; :class:`DotNotFound` says how to install it. Above
``collapse_above`` NPUs (default 256) families of identical servers collapse into one
box, so a 65,536-NPU cluster still gives a small picture.
"""

from __future__ import annotations

import os
from pathlib import Path

from rtc.emit.diagram.model import COLLAPSE_ABOVE, DIMS, VIEWS, Options

__all__ = ["FORMATS", "VIEWS", "DIMS", "COLLAPSE_ABOVE", "Options", "DotNotFound",
           "INSTALL_COMMAND", "diagram_dot", "render", "format_for"]

FORMATS = ("svg", "png", "pdf", "dot")
INSTALL_COMMAND = "apt-get install graphviz"
_SUFFIX = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


class DotNotFound(RuntimeError):
    """Graphviz's ``dot`` program is not installed (or not on PATH)."""

    def __init__(self):
        super().__init__("Graphviz `dot` was not found on PATH; rendering SVG, PNG or PDF "
                         f"needs it (install it with `{INSTALL_COMMAND}`)")


def diagram_dot(topology, diagnostics=(), options: Options | None = None) -> str:
    """The DOT text of one view of ``topology`` with ``diagnostics`` marked on it."""
    options = options or Options()
    if options.view == "topology":
        from rtc.emit.diagram.topology_view import build
    elif options.view == "groups":
        from rtc.emit.diagram.groups_view import build
    elif options.view == "network":
        from rtc.emit.diagram.network_view import build
    else:
        raise ValueError(f"unknown view {options.view!r}; expected one of {VIEWS}")
    return build(topology, list(diagnostics), options)


def render(dot_source: str, fmt: str) -> bytes:
    """Lay out and render ``dot_source`` with Graphviz ``dot`` to ``fmt`` (svg, png, pdf).

    Raises :class:`DotNotFound` when ``dot`` is missing and RuntimeError when it fails."""
    if fmt == "dot":
        return dot_source.encode("utf-8")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    import graphviz

    try:
        return graphviz.pipe("dot", fmt, dot_source.encode("utf-8"), quiet=True)
    except graphviz.ExecutableNotFound as exc:
        raise DotNotFound() from exc
    except graphviz.CalledProcessError as exc:
        err = exc.stderr.decode("utf-8", "replace").strip() if exc.stderr else str(exc)
        raise RuntimeError(f"Graphviz dot failed: {err}") from exc


def format_for(path: str | os.PathLike | None, explicit: str | None) -> str | None:
    """The output format: ``explicit`` if given, else from the file suffix, else None."""
    if explicit:
        return explicit.lower()
    if path is None:
        return None
    return _SUFFIX.get(Path(path).suffix.lower())
