"""Colours and default attributes of every kind of element, in one place.

Palettes are colour-blind safe: group outlines use Okabe-Ito (without vermillion, which
is kept for warnings, and black); server fills in the groups view use Paul Tol's "light"
scheme (black text stays legible on every colour). With more groups or servers than
colours, colours repeat in order (index modulo palette size), so the same input always
gets the same colours.

Meaning is never carried by colour alone: cross-server groups are also dashed and say
"crosses servers", errors and warnings name their rule id, idle NPUs say "idle".
"""

from __future__ import annotations

from rtc.emit.diagram.dot import merge

#: Outline colours of parallel groups (Okabe-Ito minus vermillion and black).
GROUP_COLORS: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
                                 "#F0E442")
#: Fills that tell servers apart in the groups view (Paul Tol "light" minus pale grey).
SERVER_FILLS: tuple[str, ...] = ("#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#99DDFF",
                                 "#44BB99", "#BBCC33", "#AAAA00")

WARNING = "#D55E00"   # Okabe-Ito vermillion: groups that cross servers, warnings
ERROR = "#C00000"     # errors: outlines, rule ids, unreachable pairs
IDLE_FILL = "#E6E6E6"
IDLE_TEXT = "#666666"
MUTED = "#555555"
SERVER_FILL = "#F7F7F7"
FAMILY_FILL = "#EEF3F8"
FONT = "Helvetica"


def group_color(index: int) -> str:
    return GROUP_COLORS[index % len(GROUP_COLORS)]


def server_fill(index: int) -> str:
    return SERVER_FILLS[index % len(SERVER_FILLS)]


def tint(color: str, alpha: str = "1F") -> str:
    """``color`` with an alpha channel, for light fills behind text."""
    return color + alpha


GRAPH = {"fontname": FONT, "fontsize": "12", "labelloc": "t", "labeljust": "l",
         "nodesep": "0.18", "ranksep": "0.35", "pad": "0.3", "newrank": "true",
         "compound": "true", "bgcolor": "white"}
NODE = {"fontname": FONT, "fontsize": "10", "shape": "box", "style": "rounded,filled",
        "fillcolor": "white", "color": MUTED, "penwidth": "1", "margin": "0.08,0.04"}
EDGE = {"fontname": FONT, "fontsize": "9", "color": MUTED, "arrowhead": "none"}

SERVER = {"style": "rounded,filled", "fillcolor": SERVER_FILL, "color": MUTED,
          "penwidth": "1.2", "fontsize": "11", "labeljust": "l", "margin": "10"}
SERVER_WARNING = {"color": WARNING, "penwidth": "2.5", "style": "rounded,filled,dashed"}
SERVER_ERROR = {"color": ERROR, "penwidth": "3.5", "style": "rounded,filled,bold"}

GROUP = {"style": "rounded,filled", "penwidth": "2", "fontsize": "10", "labeljust": "l",
         "margin": "6"}
GROUP_CROSSING = {"color": WARNING, "fontcolor": WARNING, "fillcolor": tint(WARNING, "14"),
                  "penwidth": "3", "style": "rounded,filled,dashed,bold"}

NPU = {}
NPU_IDLE = {"fillcolor": IDLE_FILL, "fontcolor": IDLE_TEXT, "color": "#9A9A9A",
            "style": "rounded,filled,dashed"}
NPU_WARNING = {"color": WARNING, "penwidth": "2.5"}
NPU_ERROR = {"color": ERROR, "penwidth": "3", "peripheries": "2"}

CROSSING_EDGE = {"color": WARNING, "fontcolor": WARNING, "style": "dashed,bold",
                 "penwidth": "2.5", "constraint": "false"}
UNREACHABLE_EDGE = {"color": ERROR, "fontcolor": ERROR, "style": "dashed", "penwidth": "2",
                    "constraint": "false"}
#: The prefill -> decode KV-cache transfer of a disaggregated deployment.
KV_COLOR = "#228833"
KV_EDGE = {"color": KV_COLOR, "fontcolor": KV_COLOR, "style": "bold", "penwidth": "2.5",
           "arrowhead": "normal", "constraint": "false"}
LAYOUT_EDGE = {"style": "invis"}
HEADER = {"style": "invis", "label": "", "width": "0.01", "height": "0.01",
          "fixedsize": "true"}

FAMILY = {"shape": "box", "style": "rounded,filled", "fillcolor": FAMILY_FILL,
          "color": "#33557A", "penwidth": "2", "margin": "0.2,0.12", "fontsize": "11"}
PANEL = {"shape": "plaintext", "style": "", "margin": "0", "fillcolor": None}


def style(*parts) -> dict:
    """Defaults merged with overrides (``None`` removes a key), see :func:`merge`."""
    return merge(*parts)
