"""Launch lines kept in the files of the engines that run them - Slurm batch scripts and
Ansible playbooks - as shell text for ``rtc lint``'s shell front end, so the same rules
apply to them as to shell scripts. Positions are kept: a finding points at the line (and,
for Slurm and for a playbook's block scalars, the column) of the original file.

* **sbatch** (a script with ``#SBATCH`` lines, sbatch(1)): ``srun [OPTIONS]`` before a
  command is blanked out (same length, spaces), so ``srun vllm serve ...`` is read as the
  ``vllm serve ...`` every task runs. srun options that take a value are those of
  :data:`_SRUN_VALUE` and :data:`_SRUN_LONG_VALUE` (srun(1), Slurm's slurm_opt.c; pyxis'
  container options). A script whose steps run on several nodes is one text per node
  (:func:`sbatch_nodes`).
* **Ansible playbook** (a YAML list of plays with ``tasks``): each play's, block's and
  task's ``environment`` entries become ``export NAME=VALUE`` lines, ended (``unset`` or
  the enclosing scope's value) on the first free line after that play, block or task, and
  each ``ansible.builtin.shell`` / ``command`` (or ``shell:`` / ``command:``) text is
  copied, each on the line it has in the playbook; a Jinja ``{{ expr }}`` becomes
  ``${expr}`` (a value the lint cannot know).
  Everything else becomes blank lines.

Shapes seen in public batch scripts (rewritten in tests/data/engines): ``srun ray start
--block``, ``srun torchrun --node_rank=$SLURM_NODEID ...``, ``srun --nodes=1 --ntasks=1
-w "$head" ...``.
"""

from __future__ import annotations

import re

#: srun(1) short options that take a value, as the next word or attached (``-r0``):
#: those with ``required_argument`` in Slurm's src/common/slurm_opt.c (SchedMD/slurm
#: master, 2025; doc/man/man1/srun.1). ``-I``, ``-K``, ``-k`` take an optional value, only
#: attached, so they are flags here.
_SRUN_VALUE = frozenset("-A -b -B -c -C -d -D -e -F -G -i -J -L -m -M -n -N -o -p -q -r "
                        "-S -t -T -w -W -x".split())
#: srun(1) long options that take a value as ``--opt=value`` or ``--opt value``
#: (``required_argument`` in slurm_opt.c), and pyxis' (NVIDIA/pyxis args.c) container
#: options that take one. Options with an optional value (``--exclusive[=user]``,
#: ``--overlap``, ``--bcast``, ``--pty``, ``--nice``, ``--resv-ports``, ...) take it only
#: after ``=`` and are not here.
_SRUN_LONG_VALUE = frozenset(
    "--" + o for o in """account acctg-freq bb bbf bcast-exclude begin chdir
    cluster-constraint clusters comment constraint container container-id core-spec
    cores-per-socket cpu-bind cpu-freq cpus-per-gpu cpus-per-task deadline delay-boot
    dependency distribution epilog error exclude export export-file extra extra-node-info
    gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-flags
    het-group hint ignore-signals input jobid job-name licenses mail-type mail-user
    mcs-label mem mem-bind mem-per-cpu mem-per-gpu mem-update mincpus mpi msg-timeout
    network nodefile nodelist nodes ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node
    ntasks-per-socket ntasks-per-tres open-mode output partition prefer priority profile
    prolog qos relative reservation resources runtime segment signal slurmd-debug
    sockets-per-node switches task-epilog task-prolog tasks-per-node thread-spec threads
    threads-per-core time time-min tmp tres-bind tres-per-task treewidth wait wckey
    container-image container-mounts container-workdir container-name container-save
    container-env""".split())
#: The long names of the short options the node choice reads.
_SRUN_LONG = {"-w": "--nodelist", "-r": "--relative", "-N": "--nodes", "-n": "--ntasks",
              "-G": "--gpus", "-c": "--cpus-per-task"}
#: A shell word (quotes kept), a backslash-newline being a separator.
_WORD = re.compile(r"""(?:"[^"]*"|'[^']*'|\\[^\n]|[^\s"'\\])+""")
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


#: First words of a line that starts a framework process (what runs where matters).
_LAUNCH_WORDS = ("vllm", "ray", "torchrun", "msrun", "python", "python3", "sglang")
#: Most nodes one allocation is read as (``#SBATCH --nodes``), like the other readers' caps.
MAX_NODES = 1024


def srun_options(text: str) -> tuple[list[tuple[str, str | None]], int] | None:
    """The options of the ``srun`` that ``text`` (one logical line, backslash-newlines
    kept) starts with, as ``(option, value)`` pairs (short options by their long name
    where :data:`_SRUN_LONG` has it, values unquoted; a flag's value is None), and the
    offset in ``text`` where its command starts; None when ``text`` is no ``srun CMD``."""
    body = text.lstrip()
    if not re.match(r"srun[ \t\\]", body):
        return None
    base = len(text) - len(body) + 4
    opts: list[tuple[str, str | None]] = []
    pending = None
    for m in _WORD.finditer(text, base):
        w = m.group()
        if pending is not None:
            opts.append((pending, w.strip("'\"")))
            pending = None
        elif w == "--":
            return opts, m.end()
        elif not w.startswith("-"):
            return opts, m.start()
        elif w.startswith("--"):
            name, eq, value = w.partition("=")
            if eq:
                opts.append((name, value.strip("'\"")))
            elif name in _SRUN_LONG_VALUE:
                pending = name
            else:
                opts.append((name, None))
        elif w[:2] in _SRUN_VALUE:
            name = _SRUN_LONG.get(w[:2], w[:2])
            if len(w) > 2:
                opts.append((name, w[2:].lstrip("=").strip("'\"")))
            else:
                pending = name
        else:
            opts.append((w, None))
    return None


def sbatch_header(text: str) -> dict[str, str]:
    """The ``#SBATCH`` options of ``text``'s header (sbatch(1): the lines before the first
    command; short options by their long name, the last one given wins), e.g.
    ``{"--nodes": "2", "--gres": "gpu:8"}``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            break
        m = re.match(r"#SBATCH\s+(.*)", s)
        parsed = srun_options("srun " + m.group(1).split(" #")[0] + " x") if m else None
        for name, value in (parsed[0] if parsed else []):
            out[name] = value if value is not None else ""
    return out


def _count(value: str | None) -> int | None:
    """The node count a ``--nodes`` value asks for (``2``, ``2-4``: its minimum)."""
    m = re.match(r"\d+", value or "")
    return min(int(m.group()), MAX_NODES) if m else None


def _expand(nodelist: str) -> tuple[str, ...]:
    """The nodes of a ``--nodelist`` value: ``gpu-02,gpu-03``, ``gpu-[01-03,07]`` (a
    value with a shell variable is one node: ``"$head_node"``)."""
    if "$" in nodelist:
        return (nodelist,)
    out = []
    for part in re.findall(r"[^,\[]*(?:\[[^\]]*\][^,\[]*)*", nodelist):
        m = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", part)
        if not part:
            continue
        if not m:
            out.append(part)
            continue
        for r in m.group(2).split(","):
            lo, _, hi = r.partition("-")
            nums = range(int(lo), int(hi or lo) + 1) if (lo + hi).isdigit() else ()
            out += [f"{m.group(1)}{n:0{len(lo)}d}{m.group(3)}" for n in nums][:MAX_NODES]
    return tuple(dict.fromkeys(out))


def relative_node(k: int) -> str:
    """The name of the allocation's node ``k`` (``srun -r K``, ``$SLURM_NODEID``)."""
    return f"node{k}"


def _step_target(opts: dict, alloc: int | None):
    """The nodes a step runs on: a tuple of names (``-w`` list, ``-r K`` with ``-N``
    nodes from K, ``-N`` nodes from 0), or ``"*"`` (no choice: the allocation's nodes)."""
    if opts.get("--nodelist"):
        return _expand(opts["--nodelist"])
    count = _count(opts.get("--nodes"))
    rel = opts.get("--relative")
    if rel is not None and rel.isdigit():
        start = int(rel)
        n = count or (max(alloc - start, 1) if alloc else 1)
        return tuple(relative_node(k) for k in range(start, min(start + n, MAX_NODES)))
    if count is not None and alloc is not None and count < alloc:
        return tuple(relative_node(k) for k in range(count))
    return "*"


def sbatch_nodes(text: str) -> list[tuple[str, str]] | None:
    """An sbatch script whose ``srun`` steps run on two or more nodes as one shell text
    per node, or None when it runs on one (then :func:`sbatch_shell` reads it as the
    script every node runs). A step's nodes are those it names (``-w`` / ``--nodelist``
    list, ``-r K`` / ``--relative``: the allocation's node K, :func:`relative_node`), the
    first ``-N`` of the allocation, or with no choice every node of the allocation
    (``#SBATCH --nodes``, at most :data:`MAX_NODES`) - or every named node when the script
    names its nodes by ``-w`` (``srun ray start`` after ``srun -w "$head" ...``).

    Each node's text keeps every line where it is (so findings keep their line and
    column): its own ``srun`` steps unwrapped, the other nodes' steps replaced by ``:``
    (a no-op, so loops stay valid shell). Lines without ``srun`` run once, in the batch
    step on the allocation's first node (sbatch(1)); exports reach every step (srun's
    default ``--export=ALL``), so they stay in every node's text, while launches outside
    ``srun`` are kept only for the first node named (the head in public scripts:
    ``srun -w "$head_node" ray start --head``, then a loop over the others). The
    allocation's node K also gets ``SLURM_NODEID`` / ``SLURM_PROCID`` = K (srun(1)
    OUTPUT ENVIRONMENT VARIABLES; one task per node), exported on its first ``#SBATCH``
    line (a comment, so no other line moves)."""
    lines = text.splitlines(True)
    alloc = _count(sbatch_header(text).get("--nodes"))
    steps = _steps(lines, alloc)
    named = [t for _f, _l, t, chosen in steps if chosen and isinstance(t, tuple)]
    by_list = any(not re.fullmatch(r"node\d+", n) for t in named for n in t)
    steps = [(f, l_, t if c or not isinstance(t, tuple) or not by_list else "*", c)
             for f, l_, t, c in steps]
    nodes = list(dict.fromkeys(n for _f, _l, t, _c in steps if isinstance(t, tuple)
                               for n in t))
    if not by_list and alloc and any(t == "*" and launch for _f, _l, t, launch in steps):
        nodes = list(dict.fromkeys([relative_node(k) for k in range(alloc)] + nodes))
    steps, nodes = _loop_workers(lines, steps, nodes, alloc)
    if len(nodes) < 2:
        return None
    return [(node, _node_text(lines, steps, node, node == nodes[0])) for node in nodes]


def _loop_workers(lines: list[str], steps: list, nodes: list[str], alloc: int | None):
    """``(steps, nodes)`` with the one step named by a variable inside a loop
    (``for ((i = 1; i <= worker_num; i++)); do srun -w "$node_i" ray start ...; done``,
    Ray's Slurm recipe) standing for every node of the allocation the script does not
    name otherwise: ``#SBATCH --nodes`` minus the other named nodes, as copies
    ``$node_i#1``, ``$node_i#2``... (at most :data:`MAX_NODES`)."""
    extra = min(alloc or 0, MAX_NODES) - len(nodes)
    body = _loop_body_lines(lines)
    looped = [n for n in nodes if "$" in n and
              any(t == (n,) and f in body for f, _l, t, _c in steps)]
    if extra < 1 or len(looped) != 1:
        return steps, nodes
    name = looped[0]
    copies = tuple(f"{name}#{j}" for j in range(1, extra + 2))
    steps = [(f, l_, copies if t == (name,) else t, c) for f, l_, t, c in steps]
    return steps, [x for n in nodes for x in (copies if n == name else (n,))]


def _loop_body_lines(lines: list[str]) -> set[int]:
    """The indexes of the lines inside a ``for`` / ``while`` / ``until`` loop's body (a
    line starting the loop opens it, a line starting with ``done`` closes it)."""
    inside, depth = set(), 0
    for k, line in enumerate(lines):
        if re.match(r"\s*(for|while|until)\b", line):
            depth += 1
        elif re.match(r"\s*done\b", line):
            depth = max(0, depth - 1)
        elif depth:
            inside.add(k)
    return inside


def _steps(lines: list[str], alloc: int | None) -> list:
    """``(first line, last line, target, chosen)`` of each logical line: target None
    (no step, no launch), ``""`` (a launch in the batch step) or a step's
    :func:`_step_target`; chosen: the step names its nodes (``-w``, ``-r``), or for an
    unchosen ``"*"`` step whether it launches a framework."""
    steps = []
    for k, end in _logical_lines(lines):
        block = "".join(lines[k:end + 1])
        parsed = srun_options(block)
        first = block.split(None, 1)[:1]
        if parsed is not None:
            opts = dict(parsed[0])
            target = _step_target(opts, alloc)
            chosen = bool(opts.get("--nodelist")) or "--relative" in opts
            if target == "*":
                chosen = (block[parsed[1]:].split(None, 1)[:1] or [""])[0] in _LAUNCH_WORDS
            steps.append((k, end, target, chosen))
        else:
            steps.append((k, end, "" if first and first[0] in _LAUNCH_WORDS else None, False))
    return steps


def _logical_lines(lines: list[str]):
    """``(first, last)`` line indexes of each logical line of ``lines`` (a line ending in a
    backslash goes on on the next)."""
    k = 0
    while k < len(lines):
        end = k
        while end + 1 < len(lines) and lines[end].rstrip("\r\n").endswith("\\"):
            end += 1
        yield k, end
        k = end + 1


def _node_text(lines: list[str], steps: list, node: str, batch_host: bool) -> str:
    """The shell text of ``node`` (see :func:`sbatch_nodes`)."""
    out = []
    for first, last, target, _c in steps:
        block = lines[first:last + 1]
        mine = target is None or target == "*" or (isinstance(target, tuple)
                                                    and node in target) \
            or (target == "" and batch_host)
        if mine:
            out += _unwrap_block(block) if target not in (None, "") else block
        else:
            ends = [ln[len(ln.rstrip("\r\n")):] for ln in block]
            indent = block[0][:len(block[0]) - len(block[0].lstrip())]
            tail = block[-1].rstrip("\r\n").rstrip().endswith("&")
            out.append(indent + ":" + (" &" if tail else "") + (ends[0] or ""))
            out += ends[1:]
    m = re.fullmatch(r"node(\d+)", node)
    at = next((i for i, ln in enumerate(out) if ln.startswith("#SBATCH")), None)
    if m and at is not None:
        out[at] = (f"export SLURM_NODEID={m.group(1)} SLURM_PROCID={m.group(1)} "
                   "SLURM_LOCALID=0" + out[at][len(out[at].rstrip("\r\n")):])
    return "".join(out)


def sbatch_shell(text: str) -> str:
    """Each ``srun [OPTIONS] CMD`` step with ``srun [OPTIONS]`` replaced by spaces (its
    options may go on over backslash-continued lines)."""
    lines = text.splitlines(True)
    return "".join(x for k, end in _logical_lines(lines)
                   for x in _unwrap_block(lines[k:end + 1]))


def _unwrap_block(block: list[str]) -> list[str]:
    """The lines of one logical line with a leading ``srun [OPTIONS] [--]`` replaced by
    as many spaces (line ends and the backslashes before them kept)."""
    text = "".join(block)
    parsed = srun_options(text)
    if parsed is None:
        return block
    cut = parsed[1]
    head = re.sub(r"[^\n\\]|\\(?!\r?\n)", " ", text[:cut])
    return (head + text[cut:]).splitlines(True)


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
    src = text.splitlines()
    out = (lines, text, [], src)
    if isinstance(root, yaml.SequenceNode):
        for play in root.value:
            if isinstance(play, yaml.MappingNode):
                _scope(out, play, {}, play=True)
    for last, stmt in out[2]:
        if last + 1 < len(src):      # nothing runs after the last scope
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
    as (line index, statement), the playbook's source lines)."""
    import yaml

    lines, text, restores, src = out
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
        restores.append((_last_line(src, node), "; ".join(back)))


def _last_line(src: list[str], node) -> int:
    """The last non-blank line of the mapping ``node`` (``src``: the playbook's lines):
    going back from its end mark (which can sit on the next item's line), the first line
    indented at least to its column."""
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


def sbatch_accelerator(text: str) -> str | None:
    """``"gpu"`` when a batch script's ``#SBATCH`` header asks for NVIDIA GPUs
    (``--gres=gpu:N``, ``--gpus`` / ``-G``, ``--gpus-per-node``, ``--gpus-per-task``;
    sbatch(1)), ``"npu"`` when it asks for Ascend NPUs (``--gres=npu:N``, a
    ``huawei.com/...`` resource), else None."""
    head = sbatch_header(text) if is_sbatch(text) else {}
    gres = head.get("--gres", "").lower()
    if "npu" in gres or "huawei.com" in gres or "ascend" in gres:
        return "npu"
    if re.search(r"(^|,)gpu\b", gres) or any(head.get(o) for o in (
            "--gpus", "--gpus-per-node", "--gpus-per-task")):
        return "gpu"
    return None
