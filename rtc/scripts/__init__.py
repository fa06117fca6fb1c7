"""The third front end: the launch shell scripts and env files people already run, read
without running them and lifted into the same Topology and launch plan the compiler builds,
so that ``rtc lint`` runs the compiler's rules on them (:mod:`rtc.api.linting`).

* :mod:`.shell` - the shell read as shell (bashlex, a regular expression for plain lines,
  shlex as the last resort): commands, variables with where they were set, ``source``;
* :mod:`.commands` - the launches recognised (vllm serve, the OpenAI api_server module,
  ray start, torchrun, msrun, docker run) and their flags;
* :mod:`.nodes` - which script is which node (host IP, ``--node``, ``## node`` sections);
* :mod:`.lift` - launches grouped into jobs and lifted into the model and the plan;
* :mod:`.drift` - the scripts compared with a compiled plan (``--against``, RTC707);
* :mod:`.partial` - jobs of which only some nodes' scripts are given (RTC461);
* :mod:`.rules` - the front end's own rules (RTC700-RTC708, RTC461).
"""
