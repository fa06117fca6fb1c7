"""Pieces several views draw the same way: the title, server and NPU labels, the legend
and the diagnostics panel."""

from __future__ import annotations

from rtc.diagnostics import Severity
from rtc.emit.diagram import style as st
from rtc.emit.diagram.dot import Html, text
from rtc.emit.diagram.model import codes, num, plural, shorten, worst

SEVERITY_COLOR = {Severity.ERROR: st.ERROR, Severity.WARNING: st.WARNING}


def font(s: str, *, color: str | None = None, size: int | None = None,
         bold: bool = False) -> str:
    """Escaped ``s`` wrapped in <font>/<b> as asked."""
    out = text(s)
    if bold:
        out = f"<b>{out}</b>"
    attrs = []
    if color:
        attrs.append(f'color="{color}"')
    if size:
        attrs.append(f'point-size="{size}"')
    return f"<font {' '.join(attrs)}>{out}</font>" if attrs else out


def lines(parts: list[str]) -> Html:
    """Already-escaped lines joined with <br/> (left-aligned)."""
    return Html('<br align="left"/>'.join(parts) + '<br align="left"/>')


def hardware(topo) -> str:
    p = topo.preset
    return f"{p.name} ({p.chip})"


def diag_line(diags) -> str:
    """'error RTC208' / 'warning RTC304, RTC310' in the severity's colour."""
    sev = worst(diags)
    return font(f"{sev.label} {codes(diags)}", color=SEVERITY_COLOR.get(sev), bold=True)


def server_label(topo, s, diags, extra: list[str] | None = None) -> Html:
    head = font(s.name, bold=True, size=12)
    if s.server_id not in (s.name, None if s.host_ip is None else str(s.host_ip)):
        head += font(f"  server_id {s.server_id}", color=st.MUTED)
    parts = [head]
    host = []
    if s.host_ip is not None:
        host.append(f"host {s.host_ip}")
    if s.nic:
        host.append(f"NIC {s.nic}")
    if host:
        parts.append(text(", ".join(host)))
    kind = "GPU" if topo.preset.is_gpu else "NPU"
    hw = f"{hardware(topo)}, {plural(len(s.devices), kind)}"
    if s.super_pod_id is not None:
        hw += f", super pod {s.super_pod_id}"
    parts.append(font(hw, color=st.MUTED, size=10))
    parts.extend(extra or [])
    if diags:
        parts.append(diag_line(diags))
    return lines(parts)


def server_style(diags) -> dict:
    sev = worst(diags)
    if sev is Severity.ERROR:
        return st.SERVER_ERROR
    if sev is Severity.WARNING:
        return st.SERVER_WARNING
    return {}


def title(topo, servers_drawn: int, npus: int, extra: list[str]) -> Html:
    name = font(f"cluster {topo.name}", bold=True, size=14)
    kind = "GPU" if topo.preset.is_gpu else "NPU"
    head = (f"{plural(len(topo.servers), 'server')}, {plural(npus, kind)}, "
            f"{hardware(topo)}")
    if topo.cann:
        head += f", CANN {topo.cann}"
    return lines([name + text(": " + head)] + extra)


def legend(rows: list[tuple[str, str]]) -> Html:
    """A legend table: (swatch cell html, escaped description) rows."""
    out = ['<table border="1" color="#BBBBBB" cellborder="0" cellspacing="3" cellpadding="3" '
           'bgcolor="white">', '<tr><td colspan="2" align="left"><b>Legend</b></td></tr>']
    for swatch, desc in rows:
        out.append(f'<tr>{swatch}<td align="left">{desc}</td></tr>')
    out.append("</table>")
    return Html("".join(out))


def swatch(fill: str | None = None, *, border: str | None = None, label: str = "",
           colors: tuple[str, ...] = ()) -> str:
    """A legend swatch cell: a fill, a bordered box, a row of colours, or a short text."""
    if colors:
        cells = "".join(f'<td bgcolor="{c}" width="10" height="12" fixedsize="true"></td>'
                        for c in colors)
        return (f'<td><table border="0" cellborder="0" cellspacing="1" cellpadding="0">'
                f"<tr>{cells}</tr></table></td>")
    if label:
        return f'<td width="44">{label}</td>'
    bg = f' bgcolor="{fill}"' if fill else ""
    if border:
        return (f'<td><table border="2" color="{border}" cellborder="0" cellspacing="0" '
                f'cellpadding="0"{bg}><tr><td width="36" height="12" fixedsize="true"></td>'
                f"</tr></table></td>")
    return f'<td{bg} width="40" height="12" fixedsize="true"></td>'


def diagnostics_panel(listed, limit: int = 8) -> Html | None:
    """Errors and warnings, one line each (report order), at most ``limit``."""
    if not listed:
        return None
    errors = sum(d.severity is Severity.ERROR for d in listed)
    warns = len(listed) - errors
    head = ", ".join(x for x in (plural(errors, "error") if errors else "",
                                 plural(warns, "warning") if warns else "") if x)
    out = ['<table border="1" color="#BBBBBB" cellborder="0" cellspacing="2" cellpadding="2" '
           'bgcolor="white">', f'<tr><td align="left"><b>Diagnostics: {text(head)}</b></td></tr>']
    for d in listed[:limit]:
        where = f" [{d.subject}]" if d.subject else ""
        msg = shorten(f"{d.message}{where}", 110)
        tag = font(f"{d.severity.label} {d.code}", color=SEVERITY_COLOR.get(d.severity),
                   bold=True)
        out.append(f'<tr><td align="left">{tag} {text(msg)}</td></tr>')
    if len(listed) > limit:
        more = f"... and {num(len(listed) - limit)} more (rtc check lists them all)"
        out.append(f'<tr><td align="left">{text(more)}</td></tr>')
    out.append("</table>")
    return Html("".join(out))
