"""Recognise the launch commands of a script (:class:`~rtc.scripts.shell.Command`) and read
their flags.

============================================  =============================================
command                                       read as
============================================  =============================================
``vllm serve MODEL ...``                      ``vllm`` (the model is the first positional)
``python[3] -m vllm.entrypoints.openai.       ``vllm`` (the model from ``--model``)
api_server ...``
``ray start ...``                             ``ray``
``torchrun ...``, ``python -m torch.          ``torchrun``
distributed.run ...``
``msrun ...``                                 ``msrun``
``python[3] -m sglang.launch_server ...``,    ``sglang`` (flags read as their ServerArgs
``sglang serve ...``, ``python -m             field's primary flag:
sglang_router.launch_server ...``             :mod:`rtc.plan.sglang_args`)
``python -m sglang_router.launch_router``     ``sglang_router`` (no devices; not lifted)
``docker run [-e A=b | --env A=b | -e A]      the command after the image, with the ``-e``
IMAGE CMD ...``                               variables added to its environment, its
                                              ``--device`` paths (``/dev/davinciN`` and the
                                              manager devices), ``-v`` mounts, ``--network``
                                              and ``--env-file`` files; with ``--entrypoint
                                              P`` the words after the image are P's
``bash -c "..."`` / ``sh -c``                 the string, read as shell
``singularity exec [OPTS] IMAGE CMD ...``,    the command after the image, with the host's
``apptainer exec ...``                        environment (none with ``--cleanenv`` /
                                              ``-e``) plus ``--env A=b``
============================================  =============================================

Wrappers are looked through: ``nohup``, ``exec``, ``env [A=b ...]``, ``sudo``, ``time``,
``setsid``, ``stdbuf``, ``numactl`` / ``taskset`` (with their options). Shell builtins and
common tools (:data:`KNOWN_TOOLS`) are skipped silently; any other command is *unknown* and
listed in a note. Flags are read like argparse: ``--flag=value`` or ``--flag value``; a
flag in :data:`BOOLEAN_FLAGS` takes no value; vLLM's short aliases (``-tp``, ``-dp``,
``-dpr`` ...) are read as their long names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rtc.diagnostics import Span
from rtc.plan import sglang_args
from rtc.plan.versions import VLLM_ALIASES
from rtc.scripts.shell import Command, Setting, Word

#: Flags that take no value (vLLM store_true flags rtc reads, ``ray start`` switches).
BOOLEAN_FLAGS = frozenset({
    "--headless", "--enable-expert-parallel", "--data-parallel-hybrid-lb",
    "--data-parallel-external-lb", "--trust-remote-code", "--enforce-eager",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--disable-log-requests",
    "--enable-chunked-prefill", "--enable-auto-tool-choice", "--disable-log-stats",
    "--enable-dbo", "--enable-eplb", "--eplb-log-balancedness", "--async-scheduling",
    "--head", "--block", "--disable-usage-stats", "--standalone", "--no-python", "--bind_all", "--join",
}) | sglang_args.BOOLEAN

#: Commands that start nothing rtc checks (builtins and everyday tools): not reported.
KNOWN_TOOLS = frozenset({
    "cd", "echo", "printf", "mkdir", "rm", "cp", "mv", "ln", "sleep", "wait", "true",
    "false", "exit", "return", "trap", "test", "[", "[[", "cat", "tee", "touch", "chmod",
    "chown", "ulimit", "umask", "pushd", "popd", "shift", "read", "eval", "kill", "pkill",
    "ps", "grep", "sed", "awk", "tail", "head", "date", "hostname", "ip", "ifconfig",
    "npu-smi", "hccn_tool", "sysctl", "pip", "pip3", "ls", "pwd", "which", "command",
    "type", "hash", "alias", "wc", "sort", "uniq", "cut", "tr", "curl", "wget", "ping",
    "nvidia-smi", "git", "find", "xargs", "env_check", "sync", "lscpu", "free", "df",
    "uname", "whoami", "id", "basename", "dirname", "realpath", "readlink", "mktemp",
    "logger", "ray", "docker", ":", "local", "source", "set_env.sh",
})

_WRAPPERS = {"nohup": 0, "exec": 0, "sudo": 0, "time": 0, "setsid": 0, "stdbuf": 0,
             "numactl": None, "taskset": None, "env": None, "nice": None, "ionice": None}

#: docker run options that take a value (docker's `docker run --help`).
_DOCKER_VALUE = frozenset({
    "-e", "--env", "--env-file", "-v", "--volume", "--name", "--network", "--net",
    "--device", "-p", "--publish", "--shm-size", "--ipc", "--entrypoint", "-w", "--workdir",
    "-u", "--user", "--mount", "--cpus", "--cpuset-cpus", "-m", "--memory", "--pid",
    "--ulimit", "--cap-add", "--cap-drop", "--security-opt", "-h", "--hostname",
    "--add-host", "--label", "-l", "--restart", "--runtime", "--gpus", "--log-opt",
    "--log-driver", "--platform", "--pull", "--stop-signal", "--uts", "--group-add",
})

#: singularity / apptainer exec options that take a value (Apptainer's `apptainer exec
#: --help`); ``--cleanenv`` / ``-e`` start from an empty environment.
_SINGULARITY_VALUE = frozenset({
    "-B", "--bind", "--env", "--env-file", "-H", "--home", "--pwd", "-o", "--overlay",
    "-W", "--workdir", "-S", "--scratch", "--mount", "--network", "--network-args",
    "--security", "--app", "--hostname", "--dns", "--apply-cgroups", "--cpus", "--memory",
})


@dataclass(frozen=True)
class Flag:
    """One flag as written: its canonical name, value (None for a switch), and the spans
    of the flag word and of its value."""

    name: str
    value: str | None
    span: Span
    value_span: Span | None = None


@dataclass
class Launch:
    """A recognised launch: ``kind`` (vllm, ray, torchrun, msrun), the command it came
    from, its words from the program on, its flags (canonical name -> last :class:`Flag`),
    positional words, the environment it sees (name -> Setting: the script's exported
    variables, prefix assignments and ``docker run -e``), and, in a container, the
    ``docker run --device`` paths."""

    kind: str
    command: Command
    words: list[Word]
    flags: dict = field(default_factory=dict)
    positional: list[Word] = field(default_factory=list)
    env: dict = field(default_factory=dict)
    devices: list[Word] | None = None
    subcommand: str = ""
    #: in a container: ``-v`` mounts (container path -> Word of the host:container text),
    #: ``--network`` (None when not given) and the ``--env-file`` words
    mounts: dict | None = None
    network: str | None = None
    env_files: list = field(default_factory=list)
    #: in a Kubernetes pod: the NPUs/GPUs its container is given (``resources.limits``,
    #: else ``requests``, of the device plugins' extended resources); None elsewhere
    accelerators: int | None = None

    @property
    def span(self) -> Span:
        return self.words[0].span if self.words else self.command.span

    def value(self, name: str) -> str | None:
        f = self.flags.get(name)
        return f.value if f is not None else None

    def has(self, name: str) -> bool:
        return name in self.flags

    def span_of(self, name: str) -> Span:
        f = self.flags.get(name)
        return f.span if f is not None else self.span


@dataclass
class Recognised:
    """The launches of a script and the names of the commands rtc does not know (with
    where each first appears)."""

    launches: list[Launch] = field(default_factory=list)
    unknown: dict = field(default_factory=dict)      # name -> Span


def recognise(commands: list[Command], reread=None) -> Recognised:
    """The :class:`Recognised` launches of ``commands`` (in order). ``reread(text, word)``
    reads the string of ``bash -c STRING`` as shell and returns its commands."""
    out = Recognised()
    for cmd in commands:
        _one(cmd, list(cmd.words), dict(cmd.env), None, out, reread)
    return out


def _unwrap(words: list[Word], env: dict) -> list[Word]:
    """``words`` with leading wrappers (nohup, env A=b, numactl -N 0 ...) removed; the
    ``env A=b`` assignments go into ``env``."""
    while words:
        name = os.path.basename(words[0].text)
        if name not in _WRAPPERS:
            return words
        words = words[1:]
        while words and (words[0].text.startswith("-") or
                         (name == "env" and "=" in words[0].text)):
            w = words[0]
            if name == "env" and "=" in w.text and not w.text.startswith("-"):
                var, _, value = w.text.partition("=")
                env[var] = Setting(var, value, w.span, True, w.unresolved)
            words = words[1:]
            if name in ("numactl", "taskset") and words and not words[0].text.startswith("-") \
                    and "=" not in w.text and (name == "taskset" or w.text in ("-N", "-m", "-C")):
                words = words[1:]    # the option's value (numactl -N 0, taskset -c 0-7)
        if name == "taskset" and words and not words[0].text.startswith("-") and \
                len(words) > 1 and words[0].text.replace(",", "").replace("-", "").isdigit():
            words = words[1:]        # taskset MASK cmd
    return words


def _one(cmd: Command, words: list[Word], env: dict, devices, out: Recognised, reread):
    words = _unwrap(words, env)
    if not words:
        return
    prog = os.path.basename(words[0].text)
    rest = words[1:]
    if prog == "vllm" and rest and rest[0].text == "serve":
        out.launches.append(_launch("vllm", cmd, words, rest[1:], env, devices, "serve"))
    elif prog.startswith("python") and len(rest) >= 2 and rest[0].text == "-m":
        module = rest[1].text
        if module == "vllm.entrypoints.openai.api_server":
            out.launches.append(_launch("vllm", cmd, words, rest[2:], env, devices, "api_server"))
        elif module == "torch.distributed.run":
            out.launches.append(_launch("torchrun", cmd, words, rest[2:], env, devices))
        elif module == "vllm.entrypoints.cli.main" and len(rest) > 2 and rest[2].text == "serve":
            out.launches.append(_launch("vllm", cmd, words, rest[3:], env, devices, "serve"))
        elif module in sglang_args.MODULES:
            kind = "sglang" if sglang_args.MODULES[module] == "server" else "sglang_router"
            out.launches.append(_launch(kind, cmd, words, rest[2:], env, devices, module))
        else:
            out.unknown.setdefault(f"{prog} -m {module}", words[0].span)
    elif prog == "sglang" and rest and rest[0].text == "serve":
        out.launches.append(_launch("sglang", cmd, words, rest[1:], env, devices, "serve"))
    elif prog == "ray" and rest and rest[0].text == "start":
        out.launches.append(_launch("ray", cmd, words, rest[1:], env, devices, "start"))
    elif prog in RAY_HELPERS and rest and rest[0].text in ("leader", "worker"):
        out.launches.append(_ray_helper(cmd, words, rest, env, devices))
    elif prog in ("bash", "sh") and len(rest) >= 2 and \
            os.path.basename(rest[0].text) in RAY_HELPERS:
        _one(cmd, rest, env, devices, out, reread)      # bash multi-node-serving.sh leader
    elif prog == "torchrun":
        out.launches.append(_launch("torchrun", cmd, words, rest, env, devices))
    elif prog == "msrun":
        out.launches.append(_launch("msrun", cmd, words, rest, env, devices))
    elif prog == "docker" and rest and rest[0].text == "run":
        _docker(cmd, rest[1:], env, out, reread)
    elif prog in ("singularity", "apptainer") and rest and rest[0].text == "exec":
        _singularity(cmd, rest[1:], env, devices, out, reread)
    elif prog in ("bash", "sh") and len(rest) >= 2 and rest[0].text == "-c" and reread:
        for inner in reread(rest[1], env):
            _one(inner, list(inner.words), dict(inner.env), devices, out, reread)
    elif prog in KNOWN_TOOLS:
        return
    else:
        out.unknown.setdefault(prog, words[0].span)


def _docker(cmd: Command, words: list[Word], env: dict, out: Recognised, reread) -> None:
    inner_env: dict = {}        # a container sees only what -e passes
    devices: list[Word] = []
    box = {"mounts": {}, "network": None, "env_files": []}
    k = 0
    while k < len(words):
        w = words[k]
        text = w.text
        if not text.startswith("-"):
            break
        name, eq, value = text.partition("=")
        takes = name in _DOCKER_VALUE
        if takes and not eq:
            k += 1
            if k >= len(words):
                return
            vword = words[k]
            value = vword.text
        else:
            vword = w
        if name in ("-e", "--env"):
            var, veq, val = value.partition("=")
            if veq:
                inner_env[var] = Setting(var, val, vword.span, True, vword.unresolved)
            elif var in env:           # -e NAME passes the host's value
                inner_env[var] = env[var]
        elif name == "--device":
            devices.append(Word(value.split(":")[0], vword.span))
        else:
            _docker_option(name, value, vword, box)
        k += 1
    rest = words[k + 1:]          # words[k] is the image
    if box.get("entrypoint") and k < len(words):
        rest = [box["entrypoint"], *rest]     # --entrypoint replaces the image's program
    if rest:
        before = len(out.launches)
        _one(cmd, rest, inner_env, devices, out, reread)
        for la in out.launches[before:]:
            la.mounts, la.network, la.env_files = box["mounts"], box["network"], box["env_files"]


def _singularity(cmd: Command, words: list[Word], env: dict, devices, out: Recognised,
                 reread) -> None:
    """``singularity exec [OPTS] IMAGE CMD ...`` (``words`` after ``exec``): the command
    after the image runs in the host's environment (Apptainer passes it on unless
    ``--cleanenv`` / ``-e``) plus each ``--env A=b``."""
    inner_env = dict(env)
    k = 0
    while k < len(words) and words[k].text.startswith("-"):
        name, eq, value = words[k].text.partition("=")
        if name in ("-e", "--cleanenv"):
            inner_env = {}
        elif name in _SINGULARITY_VALUE:
            vword = words[k]
            if not eq:
                k += 1
                if k >= len(words):
                    return
                vword, value = words[k], words[k].text
            var, veq, val = value.partition("=")
            if name == "--env" and veq:
                inner_env[var] = Setting(var, val, vword.span, True, vword.unresolved)
        k += 1
    if k + 1 < len(words):       # words[k] is the image
        _one(cmd, words[k + 1:], inner_env, devices, out, reread)


def _docker_option(name: str, value: str, word: Word, box: dict) -> None:
    """Record a ``docker run`` option rtc reads besides ``-e`` / ``--device``: ``-v
    HOST:CONTAINER[:mode]`` (a named volume too), ``--network`` / ``--net``, ``--env-file``,
    ``--entrypoint`` (the program the words after the image are given to)."""
    if name in ("-v", "--volume"):
        parts = value.split(":")
        target = parts[1] if len(parts) > 1 else parts[0]
        box["mounts"][target] = Word(value, word.span)
    elif name in ("--network", "--net"):
        box["network"] = value
    elif name == "--env-file":
        box["env_files"].append(Word(value, word.span))
    elif name == "--entrypoint" and value:
        box["entrypoint"] = Word(value, word.span)


#: The Ray start-up helpers of the multi-node examples: vLLM's
#: examples/online_serving/multi-node-serving.sh and LWS's docs/examples/vllm/build/
#: ray_init.sh (the same script). ``leader --ray_cluster_size=N [--ray_port=P]`` runs
#: ``ray start --head --port=P`` (P defaults to 6379) and waits for N nodes; ``worker
#: --ray_address=A [--ray_port=P]`` runs ``ray start --address=A:P --block``; other words
#: are passed on to ``ray start``.
RAY_HELPERS = frozenset({"multi-node-serving.sh", "ray_init.sh"})
RAY_HELPER_PORT = "6379"


def _ray_helper(cmd: Command, words: list[Word], rest: list[Word], env: dict,
                devices) -> Launch:
    """The ``ray start`` launch a :data:`RAY_HELPERS` script runs (``rest``: its
    subcommand and arguments), with the flags at the words that gave them."""
    own = {"--ray_port", "--ray_address", "--ray_cluster_size", "--ray_init_timeout"}
    passed = [w for w in rest[1:] if w.text.partition("=")[0] not in own]
    la = _launch("ray", cmd, words, passed, env, devices, "start")
    given = {w.text.partition("=")[0]: (w.text.partition("=")[2], w) for w in rest[1:]
             if w.text.partition("=")[0] in own}
    port, pw = given.get("--ray_port", (RAY_HELPER_PORT, rest[0]))
    if rest[0].text == "leader":
        la.flags["--head"] = Flag("--head", None, rest[0].span)
        la.flags["--port"] = Flag("--port", port, pw.span, pw.span)
    else:
        addr, aw = given.get("--ray_address", ("", rest[0]))
        la.flags["--address"] = Flag("--address", f"{addr}:{port}" if addr else "",
                                     aw.span, aw.span)
        la.flags["--block"] = Flag("--block", None, rest[0].span)
    return la


def _launch(kind: str, cmd: Command, words: list[Word], args: list[Word], env: dict,
            devices, sub: str = "") -> Launch:
    out = Launch(kind, cmd, words, env=env, devices=devices, subcommand=sub)
    k = 0
    while k < len(args):
        w = args[k]
        text = w.text
        if text.startswith("-") and len(text) > 1 and not text[1:2].isdigit():
            name, eq, value = text.partition("=")
            name = VLLM_ALIASES.get(name, name) if kind == "vllm" else \
                sglang_args.canonical(name) if kind == "sglang" else name
            if kind == "vllm" and name.startswith("--"):
                name = name.replace("_", "-")
            if eq:
                out.flags[name] = Flag(name, value, w.span, w.span)
            elif name in BOOLEAN_FLAGS or k + 1 >= len(args) or \
                    (args[k + 1].text.startswith("-") and not args[k + 1].text[1:2].isdigit()):
                out.flags[name] = Flag(name, None, w.span)
            else:
                out.flags[name] = Flag(name, args[k + 1].text, w.span, args[k + 1].span)
                k += 1
        else:
            out.positional.append(w)
        k += 1
    return out


__all__ = ["Flag", "Launch", "Recognised", "recognise", "BOOLEAN_FLAGS"]
