"""Launch lines kept in the files of the engines that run them - Slurm batch scripts and
Ansible playbooks - as shell text for ``rtc lint``'s shell front end, so the same rules
apply to them as to shell scripts. Positions are kept: a finding points at the line (and,
for Slurm and for a playbook's block scalars, the column) of the original file.

* **sbatch** (a script with ``#SBATCH`` lines, sbatch(1)): ``srun [OPTIONS]`` before a
  command is blanked out (same length, spaces), so ``srun vllm serve ...`` is read as the
  ``vllm serve ...`` every task runs. srun options that take a separate value are those of
  :data:`_SRUN_VALUE` (srun(1), Slurm 22.05: the short options with an argument).
* **Ansible playbook** (a YAML list of plays with ``tasks``): each play's, block's and
  task's ``environment`` entries become ``export NAME=VALUE`` lines, ended (``unset`` or
  the enclosing scope's value) on the first free line after that play, block or task, and
  each ``ansible.builtin.shell`` / ``command`` (or ``shell:`` / ``command:``) text is
  copied, each on the line it has in the playbook; a Jinja ``{{ expr }}`` becomes ``${expr}`` (a value the lint cannot know).
  Everything else becomes blank lines.

Shapes seen in public batch scripts (rewritten in tests/data/engines): ``srun ray start
--block``, ``srun torchrun --node_rank=$SLURM_NODEID ...``, ``srun --nodes=1 --ntasks=1
-w "$head" ...``.
"""

from __future__ import annotations

import re

#: srun(1) short options that take their value as the next word.
_SRUN_VALUE = frozenset("-A -b -c -C -d -D -e -G -i -J -L -m -M -n -N -o -p -q -S -t -T "
                        "-w -W -x".split())
_SRUN = re.compile(r"^(\s*)(srun)((?:\s+-\S+)*)\s+")
_JINJA = re.compile(r"\{\{\s*(.*?)\s*\}\}")
#: A Jinja statement or comment; one left open runs to the end of the line.
_JINJA_CONTROL = re.compile(r"\{%.*?(?:%\}|$)|\{#.*?(?:#\}|$)")


def is_ansible(label: str, text: str) -> bool:
    """A YAML file that is an Ansible playbook or inventory (``hosts:`` / ``tasks:``
    keys) and not a Kubernetes manifest (no top-level ``apiVersion:`` and ``kind:``)."""
    if not label.endswith((".yml", ".yaml")):
        return False
    if re.search(r"(?m)^apiVersion:\s*\S", text) and re.search(r"(?m)^kind:\s*\S", text):
        return False
    return bool(re.search(r"^\s*(- )?(tasks|hosts):", text, re.M))


def is_sbatch(text: str) -> bool:
    """A Slurm batch script: it has ``#SBATCH`` lines (sbatch(1))."""
    return re.search(r"^#SBATCH\s", text, re.M) is not None


def as_shell(label: str, text: str) -> str:
    """``text`` as shell for the lint: an sbatch script with its ``srun`` prefixes blanked,
    an Ansible playbook's environment and commands, anything else unchanged."""
    if is_sbatch(text):
        return sbatch_shell(text)
    if is_ansible(label, text):
        return playbook_shell(text) if re.search(r"^\s*(- )?tasks:", text, re.M) \
            else inventory_shell(text)
    return text


#: The programs whose command lines a host variable of an inventory may hold.
_LAUNCHERS = ("vllm ", "ray ", "torchrun ", "msrun ", "python -m vllm", "python3 -m vllm")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def inventory_shell(text: str) -> str:
    """An Ansible YAML inventory as one ``## node HOST`` section per host that carries
    launch lines (a variable whose value starts with vllm / ray / torchrun / msrun) or
    environment (a mapping whose keys are all environment-variable names), each section
    on the host's own line and its exports / commands on their lines. Hosts are taken
    from ``all.hosts`` and every group's ``hosts`` (Ansible docs, "How to build your
    inventory", YAML format). A text that is not YAML is returned as blank lines."""
    import yaml

    lines = [""] * (text.count("\n") + 1)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return "\n" * text.count("\n")
    for key, host_vars in _hosts(root):
        if not isinstance(host_vars, yaml.MappingNode):
            continue
        placed = [_host_var(lines, v) for _k, v in host_vars.value]
        if any(placed):
            lines[key.start_mark.line] = f"## {key.value}"
    return "\n".join(lines)


def _hosts(node):
    """``(host key node, host vars node)`` under every ``hosts`` mapping of an inventory."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    for k, v in node.value:
        if k.value == "hosts" and isinstance(v, yaml.MappingNode):
            yield from v.value
        elif isinstance(v, yaml.MappingNode):
            yield from _hosts(v)


def _host_var(lines: list[str], node) -> bool:
    """Place a host variable's launch line or environment onto ``lines``; True when it
    held either."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) \
            and node.value.lstrip().startswith(_LAUNCHERS):
        _place(lines, node, "")
        return True
    if isinstance(node, yaml.MappingNode) and node.value and all(
            isinstance(k, yaml.ScalarNode) and _ENV_NAME.fullmatch(k.value)
            and isinstance(v, yaml.ScalarNode) for k, v in node.value):
        for k, v in node.value:
            lines[k.start_mark.line] = f"export {k.value}={_shell_word(_jinja(v.value))}"
        return True
    return False


#: srun(1) options that choose the nodes of a step: the node list, or a node by its
#: position in the allocation (``-r`` / ``--relative``).
_SRUN_TARGET = re.compile(r"""(?:^|\s)(?:-w\s*|--nodelist[=\s]\s*|-r\s*|--relative[=\s]\s*)("[^"]*"|'[^']*'|\S+)""")
#: First words of a line that starts a framework process (what runs where matters).
_LAUNCH_WORDS = ("vllm", "ray", "torchrun", "msrun", "python", "python3", "sglang")


def sbatch_nodes(text: str) -> list[tuple[str, str]] | None:
    """An sbatch script whose ``srun`` steps name their node (``-w NODE``, ``--nodelist``,
    ``-r K`` / ``--relative``) as one shell text per node, or None when fewer than two
    nodes are named (then :func:`sbatch_shell` reads it as the script every node runs).

    Each node's text keeps every line where it is (so findings keep their line and
    column): its own ``srun`` steps unwrapped, the other nodes' steps replaced by ``:``
    (a no-op, so loops stay valid shell). Lines without ``srun`` run once, in the batch
    step on the allocation's first node (sbatch(1)); exports reach every step (srun's
    default ``--export=ALL``), so they stay in every node's text, while launches outside
    ``srun`` are kept only for the first node named (the head in public scripts:
    ``srun -w "$head_node" ray start --head``, then a loop over the others)."""
    lines = text.splitlines(True)
    steps: list[tuple[int, int, str | None]] = []      # (first, last line, target)
    k = 0
    while k < len(lines):
        end = k
        while end + 1 < len(lines) and lines[end].rstrip("\r\n").endswith("\\"):
            end += 1
        body = lines[k].lstrip()
        target = None
        if re.match(r"srun[ \t]", body):
            opts = _unwrap_srun(lines[k])
            m = _SRUN_TARGET.search(lines[k][:len(opts) - len(opts.lstrip())])
            target = m.group(1).strip("'\"") if m else "*"
        elif body.split(None, 1)[:1] and body.split(None, 1)[0] in _LAUNCH_WORDS:
            target = ""                                 # a launch in the batch step
        steps.append((k, end, target))
        k = end + 1
    named = list(dict.fromkeys(t for _f, _l, t in steps if t not in (None, "", "*")))
    if len(named) < 2:
        return None
    return [(node, _node_text(lines, steps, node, node == named[0])) for node in named]


def _node_text(lines: list[str], steps: list, node: str, batch_host: bool) -> str:
    """The shell text of ``node`` (see :func:`sbatch_nodes`)."""
    out = []
    for first, last, target in steps:
        block = lines[first:last + 1]
        mine = target is None or target in ("*", node) or (target == "" and batch_host)
        if mine:
            out += [_unwrap_srun(block[0])] + block[1:] if target not in (None, "") \
                else block
        else:
            ends = [ln[len(ln.rstrip("\r\n")):] for ln in block]
            indent = block[0][:len(block[0]) - len(block[0].lstrip())]
            tail = block[-1].rstrip("\r\n").rstrip().endswith("&")
            out.append(indent + ":" + (" &" if tail else "") + (ends[0] or ""))
            out += ends[1:]
    return "".join(out)


def sbatch_shell(text: str) -> str:
    """Each ``srun [OPTIONS] CMD`` line with ``srun [OPTIONS]`` replaced by spaces."""
    return "".join(_unwrap_srun(line) for line in text.splitlines(True))


def _unwrap_srun(line: str) -> str:
    """``line`` with a leading ``srun [OPTIONS] [--]`` replaced by as many spaces."""
    body = line.lstrip()
    if not re.match(r"srun[ \t]", body):
        return line
    base = len(line) - len(body) + 4
    value_next = False
    for m in re.finditer(r"\S+", line[base:]):
        w = m.group()
        if value_next:
            value_next = False
        elif w == "--":
            cut = base + m.end()
            break
        elif not w.startswith("-"):
            cut = base + m.start()
            break
        else:
            value_next = w in _SRUN_VALUE
    else:
        return line
    return " " * cut + line[cut:]


def playbook_shell(text: str) -> str:
    """The environment and commands of a playbook's tasks, each on its own line (see the
    module docstring); a text that is not YAML is returned as blank lines.

    An ``environment`` applies only to its scope (Ansible docs, "Setting the remote
    environment": play, block or task level; ansible-core lib/ansible/playbook/base.py,
    ``environment = FieldAttribute(isa='list', extend=True, prepend=True)``: a task's
    environment is its parents' list followed by its own, never a sibling's). Its entries
    are ``export`` lines where the playbook writes them (the name at its own column); on
    the first free line after the scope the names are set back to the enclosing scope's
    value or ``unset``, so a later task does not inherit them."""
    import yaml

    lines = [""] * (text.count("\n") + 1)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return "\n" * text.count("\n")
    out = (lines, text, [])
    if isinstance(root, yaml.SequenceNode):
        for play in root.value:
            if isinstance(play, yaml.MappingNode):
                _scope(out, play, {}, play=True)
    for last, stmt in out[2]:
        if last + 1 < len(text.splitlines()):      # nothing runs after the last scope
            _restore(lines, last, stmt)
    return "\n".join(lines)


#: The keys of a play, and of a block, that hold task lists.
_PLAY_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers")
_BLOCK_LISTS = ("block", "rescue", "always")


def _scope(out: tuple, node, outer: dict, play: bool = False) -> None:
    """Place a play's, block's or task's environment and commands onto ``out``'s lines,
    then its tasks (a play's task lists, a block's ``block`` / ``rescue`` / ``always``)
    with its environment over ``outer``; queue on ``out``'s restores the statement that
    ends its environment after its last line. ``out``: (lines, playbook text, restores
    as (line index, statement))."""
    import yaml

    lines, text, restores = out
    env = dict(outer)
    own: list[str] = []
    for key, value in node.value:
        name = key.value
        if name == "environment" and isinstance(value, yaml.MappingNode):
            for k, v in value.value:
                if isinstance(v, yaml.ScalarNode) and isinstance(k, yaml.ScalarNode):
                    pad = " " * max(0, k.start_mark.column - len("export "))
                    env[k.value] = _shell_word(_jinja(v.value))
                    lines[k.start_mark.line] = f"{pad}export {k.value}={env[k.value]}"
                    own.append(k.value)
        elif not play and isinstance(name, str) \
                and name.split(".")[-1] in ("shell", "command") \
                and isinstance(value, yaml.ScalarNode):
            _place(lines, value, text)
    for key, value in node.value:
        if key.value in (_PLAY_LISTS if play else _BLOCK_LISTS) \
                and isinstance(value, yaml.SequenceNode):
            for task in value.value:
                if isinstance(task, yaml.MappingNode):
                    _scope(out, task, env)
    if own:
        back = [f"export {n}={outer[n]}" if n in outer else f"unset {n}"
                for n in dict.fromkeys(own)]
        restores.append((_last_line(text, node), "; ".join(back)))


def _last_line(text: str, node) -> int:
    """The last non-blank line of the mapping ``node``: going back from its end mark
    (which can sit on the next item's line), the first line indented at least to its
    column."""
    src = text.splitlines()
    first, col = node.start_mark.line, node.start_mark.column
    k = min(node.end_mark.line, len(src) - 1)
    while k > first and (not src[k].strip() or len(src[k]) - len(src[k].lstrip()) < col):
        k -= 1
    return k


def _restore(lines: list[str], last: int, stmt: str) -> None:
    """Put ``stmt`` on the line after ``last`` (a scope's last line) when nothing is
    there, else on line ``last`` when nothing is there, else after the scope's last
    command (``; stmt``)."""
    for k in (last + 1, last):
        if k < len(lines) and not lines[k]:
            lines[k] = stmt
            return
    k = last
    while k > 0 and not lines[k].strip():
        k -= 1
    line = lines[k].rstrip()
    sep = " " if line.endswith(("&", ";")) and not line.endswith("&&") else "; "
    lines[k] = line + sep + stmt if line else stmt


def _place(lines: list[str], node, text: str) -> None:
    """Copy the command ``node`` holds onto the lines it spans (a block scalar's lines
    start on the line after its ``|`` / ``>``)."""
    value = _jinja(node.value)
    block = node.style in ("|", ">")
    first = node.start_mark.line + (1 if block else 0)
    if block:
        _place_block(lines, node.style, first, text)
        return
    # a one-line scalar keeps its column (past its opening quote)
    pad = "" if block or "\n" in value else " " * (node.start_mark.column + bool(node.style))
    for n, part in enumerate(value.splitlines()):
        if first + n < len(lines):
            lines[first + n] = pad + part


def _place_block(lines: list[str], style: str, first: int, text: str) -> None:
    """Copy a block scalar's source lines (from ``first``) as they are written, so each word
    keeps its line and column; the lines of a folded scalar (``>``, which YAML joins with
    spaces) end in a `` \\`` continuation but the last of each paragraph (before a blank
    line), so the shell reads one command as YAML does."""
    src = text.splitlines()
    if first >= len(src):
        return
    indent = len(src[first]) - len(src[first].lstrip())
    body: list[str] = []
    for line in src[first:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(_jinja(line))
    while body and not body[-1].strip():
        body.pop()
    for n, line in enumerate(body):
        joined = style == ">" and line.strip() and n + 1 < len(body) and body[n + 1].strip()
        if first + n < len(lines):
            lines[first + n] = line + (" \\" if joined else "")


def _jinja(value: str) -> str:
    """``value`` with each Jinja ``{{ expr }}`` as ``${expr}`` and each statement
    ``{% ... %}`` / comment ``{# ... #}`` (Jinja docs, "Template Designer Documentation":
    delimiters) as a ``${___}`` of the same length: a value the lint cannot know (whether
    an ``{% if %}`` holds is decided per host), so a word next to one is unresolved, not a
    false error, and the words after it keep their columns."""
    value = _JINJA_CONTROL.sub(lambda m: "${" + "_" * (len(m.group()) - 3) + "}", value)
    return _JINJA.sub(lambda m: "${" + re.sub(r"\W", "_", m.group(1)) + "}", value)


def _shell_word(value: str) -> str:
    return value if re.fullmatch(r"[\w@%+=:,./${}-]*", value) else "'" + value.replace(
        "'", "'\\''") + "'"
