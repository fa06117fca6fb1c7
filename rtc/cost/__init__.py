"""Communication cost model: α-β-γ estimates of the collectives of a deployment, per
group, per layer and per step, and a layout search over parallel sizes.

Pure functions over plain inputs; parameters are data (``links.toml``, ``models.toml``).
Units everywhere: sizes in **bytes**, times in **seconds**, bandwidths in **bytes/s**
per direction. Every figure is data with its source: each row of ``links.toml`` and
``models.toml`` has a ``source`` naming the primary document by a tag, and the header of
``links.toml`` says what each tag is (repository, file and commit, paper or issue).

Modules, bottom up:

* :mod:`~rtc.cost.units` parses and prints ``20us``, ``196GB/s``, ``1MiB``;
* :mod:`~rtc.cost.params` loads the parameter sets ``nominal`` and ``hccl-plan`` and
  applies overrides (``roce.alpha=20us``);
* :mod:`~rtc.cost.links` gives the link class of a rank pair (SIO, HCCS, UB, RoCE, ...);
* :mod:`~rtc.cost.spans` gives a group's span class, bottleneck link and HCCL levels;
* :mod:`~rtc.cost.formulas` holds the textbook formulas; :mod:`~rtc.cost.hccl_algo`
  HCCL's algorithm choice and ``HCCL_ALGO``; :mod:`~rtc.cost.collectives` the collective
  times on a group with the algorithm HCCL would pick;
* :mod:`~rtc.cost.models`, :mod:`~rtc.cost.workload`, :mod:`~rtc.cost.moe` describe the
  model, the load and vllm-ascend's MoE method;
* :mod:`~rtc.cost.deployment` places a layout (from a Topology job or a server grid);
  :mod:`~rtc.cost.schedule` costs one step per group; :mod:`~rtc.cost.layouts` enumerates
  and ranks layouts; :mod:`rtc.report.cost_tables` renders both as plain-text tables.

Import from the modules (``from rtc.cost.schedule import schedule``): the package itself
imports nothing, so that a check that needs one function (RTC343 reads a model preset and
the chip's HBM) does not load the whole model at start-up.

Limits (:data:`rtc.cost.schedule.LIMITS`): communication only — no compute model, no TPOT prediction;
absolute times are ±2× until calibrated (α on Ascend is the weakest input, reference
§1.5); rankings are more robust. Congestion, PFC/ECN, adaptive routing and link faults
are not modelled; AIV and fused MC2 fast paths change α more than modelled.
"""
