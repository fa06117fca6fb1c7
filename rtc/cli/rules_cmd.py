"""`rtc rules` and `rtc explain`."""

from __future__ import annotations

from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_usage, write_stdout


@app.command("rules")
def rules_command() -> None:
    """List every rule id rtc can report, one per line."""
    from rtc.catalogue import RULES

    write_stdout("".join(f"{r.code}  {r.severity.label:<7}  {r.name:<28}  {r.summary}\n"
                         for r in RULES))


@app.command("explain")
def explain_command(
    name: Optional[str] = typer.Argument(
        None, metavar="NAME", show_default=False,
        help="A rule id (RTC208), a rule name as `rtc rules` prints it (duplicate-device-ip; "
             "underscores work too), an attribute of the language (device_ip), an HCCL "
             "variable (HCCL_BUFFSIZE), or an NCCL variable rtc writes (NCCL_IB_HCA)."),
    language_reference: bool = typer.Option(
        False, "--language-reference",
        help="Print the whole language reference (Markdown, docs/language.md)."),
) -> None:
    """Explain a rule (what it finds, why it breaks at run time, an example, the fix) or an
    attribute (the blocks that accept it, its value, default, what it becomes, an example).

    `rtc explain --language-reference > docs/language.md` writes the language reference,
    generated from the parser's attribute table."""
    if language_reference:
        if name is not None:
            fail_usage("give a NAME or --language-reference, not both")
        from rtc.report.language_reference import render_language_reference

        write_stdout(render_language_reference())
        return
    if name is None:
        fail_usage("explain needs a rule id, a rule name or an attribute name",
                   "e.g. `rtc explain RTC208` or `rtc explain device_ip`; `rtc rules` lists "
                   "the rules")
    r = _rule(name)
    if r is not None:
        also = "".join(f"Also reported as {s.label}: {why}.\n" for s, why in r.also)
        write_stdout(f"{r.code} {r.name} ({r.severity.label})\n\n{r.summary}\n\n"
                     f"{r.explanation}\n\nDeclared in {r.path}.\n" + (f"\n{also}" if also else ""))
        return
    from rtc.report.language_reference import render_attribute_entry, render_block_entry

    entry = (render_block_entry(name) or render_attribute_entry(name) or env_entry(name)
             or nccl_entry(name))
    if entry is None:
        if name.upper().startswith("NCCL_"):
            fail_usage(f"rtc has no data on the NCCL variable {name.upper()}: `rtc explain` "
                       "explains rules, attributes, HCCL variables and the NCCL variables "
                       f"rtc writes or checks ({', '.join(NCCL_VARIABLES)})",
                       f"see NCCL's environment variable reference, {_NCCL_DOCS}")
        _unknown(name)
    write_stdout(entry)


_NCCL_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
#: The NCCL variables rtc writes or checks on NVIDIA GPU servers: (what it is, what rtc does
#: with it). Source: NCCL's docs env.rst (the variable's section); rtc/plan/node_env.py.
NCCL_VARIABLES = {
    "NCCL_SOCKET_IFNAME": (
        "the IP interfaces NCCL uses for its sockets (bootstrap, and data without "
        "InfiniBand): a comma list of name prefixes, led by `=` for exact names and / or `^` "
        "to exclude",
        "written from the server's `nic`; checked by RTC453 (syntax) and RTC454 (selects the "
        "server's NIC)"),
    "NCCL_IB_HCA": (
        "the InfiniBand / RoCE HCAs NCCL may use: a comma list of HCA-name prefixes with an "
        "optional :port each, led by `=` for exact names and / or `^` to exclude",
        "written from the servers' `ib_hca`; checked by RTC472"),
    "NCCL_TOPO_FILE": (
        "an XML topology file NCCL loads before it detects the topology",
        "written from the nvidia-smi captures with `nccl_topo_file on`; checked by RTC476"),
}


def nccl_entry(name: str) -> str | None:
    """`rtc explain NCCL_IB_HCA`: what one of :data:`NCCL_VARIABLES` is and what rtc does
    with it, or None for another name."""
    key = name.upper()
    if key not in NCCL_VARIABLES:
        return None
    import textwrap

    meaning, by_rtc = NCCL_VARIABLES[key]
    return "\n".join([f"{key} (NCCL environment variable, NVIDIA GPU servers: `env {key} = "
                      "...` in a job)", "", textwrap.fill(meaning[:1].upper() + meaning[1:]
                                                          + ".", 88), "",
                      f"  rtc: {by_rtc}", f"  source: NCCL docs, {_NCCL_DOCS}"]) + "\n"


#: The rules besides RTC458 (the value) that judge a variable.
_ENV_RULES = {
    "HCCL_INTRA_PCIE_ENABLE": "RTC227, RTC460", "HCCL_INTRA_ROCE_ENABLE": "RTC227-RTC229, "
    "RTC421, RTC460", "HCCL_INTER_HCCS_DISABLE": "RTC459, RTC421",
    "HCCL_IF_BASE_PORT": "RTC440, RTC441, RTC444", "HCCL_HOST_SOCKET_PORT_RANGE": "RTC440, RTC441",
    "HCCL_IF_IP": "RTC450 (fixed-hccl-if-ip)", "HCCL_SOCKET_IFNAME": "RTC453, RTC454",
}


def env_entry(name: str) -> str | None:
    """`rtc explain HCCL_BUFFSIZE`: what an HCCL variable rtc knows does, its unit, range,
    default and source (rtc.network.env.ENV_VALUES), or None for another name."""
    from rtc.network.env import ENV_VALUES, JUDGED_ELSEWHERE

    key = name.upper()
    r = ENV_VALUES.get(key)
    if r is None:
        return None
    if r.choices:
        values = "one of " + ", ".join(r.choices) + (" (any case)" if r.nocase else "")
    elif r.kind:
        values = {"ports": "ports and LOW-HIGH ranges joined by ',', or auto (1..65535)",
                  "retry": "L1:0|1 and / or L2:0|1 joined by ','",
                  "algo": "level0:NA;level1:<algo>[;level2:<algo>], or per operator "
                          "op=...;.../op=...",
                  "text": f"text, at most {r.max_len} characters"}[r.kind]
    else:
        values = (f"at least {r.lo}" if r.hi is None else f"{r.lo}..{r.hi}") + \
            (f", a multiple of {r.step}" if r.step > 1 else "") + \
            "".join(f"; {chip}: {lo}..{hi}" for chip, lo, hi in r.chip_ranges)
    rules = "RTC458 (value)" if key not in JUDGED_ELSEWHERE else ""
    more = _ENV_RULES.get(key)
    rules = ", ".join(x for x in (rules, more) if x)
    import textwrap

    lines = [f"{key} (HCCL environment variable: `env {key} = ...` in a job)", "",
             textwrap.fill(r.meaning[:1].upper() + r.meaning[1:] + ".", 88), ""]
    if r.unit:
        lines.append(f"  unit: {r.unit}")
    lines += [f"  range: {values}", f"  default: {r.default}", f"  checked by: {rules}",
              f"  source: {r.source}"]
    return "\n".join(lines) + "\n"


def _rule(name: str):
    """The rule with this id (``RTC208``, any case) or name (``duplicate-device-ip`` or
    ``duplicate_device_ip``), or None."""
    from rtc.catalogue import RULES, get_rule

    found = get_rule(f"RTC{name}" if name.isascii() and name.isdigit() else name)  # 208
    if found is not None:
        return found
    wanted = name.lower().replace("_", "-")
    return next((r for r in RULES if r.name == wanted), None)


def _unknown(name: str) -> None:
    """The usage error (exit 2) for a NAME that is no rule and no attribute, with the
    closest rule name or attribute as "did you mean"."""
    import difflib
    import re

    if re.fullmatch(r"rtc\d+", name, re.IGNORECASE):
        fail_usage(f"unknown rule '{name}'", "`rtc rules` lists them")
    if name.upper().startswith("HCCL_"):
        from rtc.network.env import ENV_VALUES

        close = difflib.get_close_matches(name.upper(), list(ENV_VALUES), n=1, cutoff=0.8)
        fail_usage(f"rtc has no data on the HCCL variable {name.upper()}",
                   f"did you mean {close[0]}?" if close else
                   f"rtc knows {len(ENV_VALUES)} HCCL variables (e.g. HCCL_BUFFSIZE); for the "
                   "others see HCCL's list, hicann/hccl docs/zh/user_guide/hccl_env")
    from rtc.report.language_reference import attribute_names
    from rtc.catalogue import RULES

    # Compare with '-' and '_' alike: `duplicate_device_ipp` is close to duplicate-device-ip.
    from rtc.syntax.schema import BLOCK_SPECS

    known = {n.replace("-", "_"): n
             for n in [r.name for r in RULES] + attribute_names() + list(BLOCK_SPECS)}
    close = difflib.get_close_matches(name.lower().replace("-", "_"), list(known), n=1,
                                      cutoff=0.6)
    where = "`rtc rules` lists the rules, `rtc explain --language-reference` the attributes"
    fail_usage(f"unknown rule, block or attribute '{name}'",
               f"did you mean '{known[close[0]]}'? {where}" if close else where)
