"""Prefill/decode disaggregation (RTC520-RTC528): the pairing of prefill and decode jobs
(``disaggregation`` blocks, or the implicit pair of ``role prefill`` / ``role decode``
jobs), their KV connector and the sizes the connector's ``kv_connector_extra_config``
describes."""

from __future__ import annotations

from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.versions import LLMDATADIST_REMOVED, parse_version
from rtc.rules import rule

TP_RATIO = rule("RTC520", "pd-tp-ratio", "error",
                "Prefill TP is smaller than decode TP, or not a multiple of it.", """
    What: a prefill job's `tp` and a decode job's `tp` where prefill < decode, or prefill
    is not an integer multiple of decode.
    Why: the Mooncake connector maps each decode TP rank to prefill TP ranks; vllm-ascend
    raises "prefill_tp_size: ... must be greater than or equal to the decode_tp_size" and
    the guide requires a multiple, otherwise KV blocks go to the wrong ranks.
    Example: prefill `tp 4`, decode `tp 8`; or prefill `tp 6`, decode `tp 4`.
    Fix: e.g. prefill TP16 with decode TP4 (D5). With `kv_connector nixl` (vLLM's
    NixlConnector, NVIDIA GPUs) either side may be larger, but the larger TP must be a
    multiple of the smaller.""")
CONNECTOR = rule("RTC521", "pd-connector", "error",
                 "Prefill and decode jobs lack a KV connector, or use different ones.", """
    What: a job of a prefill/decode pair without `kv_connector`, or the two sides with
    different connectors.
    Why: the launch needs --kv-transfer-config with one connector on both sides; different
    connectors cannot talk to each other and the KV cache never arrives.
    Example: prefill `kv_connector mooncake`, decode `kv_connector mooncake_layerwise`.
    Fix: give both sides the same `kv_connector`.""")
PAIRING = rule("RTC522", "pd-pairing", "error",
               "A disaggregation block names an unknown job or one with the wrong role.", """
    What: `prefill NAME` / `decode NAME` with no such job, a job listed on both sides or
    in two blocks, a side left empty, or a job whose `role` is not the side it is listed
    on (prefill jobs need `role prefill`, decode jobs `role decode`).
    Why: the connector's kv_role and the extra config are derived from the pairing; a
    wrong pairing gives producers that nobody consumes.
    Example: `disaggregation { prefill p  decode p }`.
    Fix: list existing jobs, each once, with matching roles.""")
UNPAIRED = rule("RTC523", "pd-unpaired", "warning",
                "A prefill or decode job has no partner.", """
    What: a job with `role prefill` but no decode job (or the reverse), or such a job
    missing from every `disaggregation` block.
    Why: it is launched without --kv-transfer-config; a prefill instance alone never hands
    its KV cache on.
    Example: a file with `role prefill` and no `role decode` job.
    Fix: add the other side, or list the job in a `disaggregation` block.""")
DECODE_PP = rule("RTC524", "pd-decode-pp", "error", "A decode job uses pipeline parallelism.", """
    What: a decode job with `pp` > 1 in a prefill/decode pair.
    Why: vllm-ascend's Mooncake connector asserts that the decode side's pp_size is 1.
    Example: decode `pp 2`.
    Fix: use TP / DP on the decode side.""")
SIZES = rule("RTC525", "pd-instance-sizes", "error",
             "Instances of one side have different dp / tp / pp.", """
    What: two prefill jobs (or two decode jobs) of one pair with different sizes.
    Why: kv_connector_extra_config describes one prefill and one decode shape, identically
    on both sides; instances that differ get KV blocks cut for another shape.
    Example: prefill jobs p1 (dp 2, tp 8) and p2 (dp 1, tp 16) in one block.
    Fix: give the instances of a side the same sizes, or pair them in separate blocks.""")
LLMDD_REMOVED = rule("RTC526", "llmdatadist-removed", "error",
                     "The LLMDataDist connector is gone in the declared vLLM version.", """
    What: `kv_connector llmdatadist` with `vllm_version` 0.13 or later.
    Why: vllm-ascend removed LLMDataDistCMgrConnector (and its rank table generator) in
    0.13; the engine fails to load the connector module.
    Example: `vllm_version 0.13.0` with `kv_connector llmdatadist`.
    Fix: use `kv_connector mooncake` or `mooncake_layerwise`.""")
LLMDD_TP = rule("RTC527", "llmdatadist-cross-node-tp", "error",
                "With LLMDataDist, a TP group spans servers.", """
    What: `kv_connector llmdatadist` in a job whose replica (TP x PP x PCP) is larger than
    a server.
    Why: the connector finds its entry in the PD rank table among the entries of its own
    server by TP rank ("we assume the local node only contains dp and tp"); a TP group
    over two servers reads entries that do not exist ("Can't read the target server_id").
    Example: `tp 16` on 8-NPU servers with `kv_connector llmdatadist`.
    Fix: keep TP inside a server, or use a Mooncake connector.""")
PD_FRAMEWORK = rule("RTC528", "pd-framework", "error",
                    "A prefill/decode job is not a vLLM job.", """
    What: a job in a prefill/decode pair with `framework` other than vllm (a pair whose
    jobs are all `framework mindie`, or all `framework sglang`, is that framework's own
    disaggregation and fine; a pair mixing them with another framework is reported once).
    Why: the disaggregated launch (--kv-transfer-config) is vLLM's.
    Example: `role prefill` with `framework mindspore`.
    Fix: use `framework vllm` (the default).""")

PD_MODEL = rule("RTC529", "pd-model-mismatch", "warning",
                "The jobs of a prefill/decode pair serve different models.", """
    What: a prefill job and a decode job of one pair with different `model` values.
    Why: the decode side reads the KV cache the prefill side computed; with other weights
    (or another tokenizer) the cache is wrong: garbage output, or a shape error when the
    first request is handed over.
    Example: prefill `model "/models/DeepSeek-R1"`, decode `model "/models/DeepSeek-V3"`.
    Fix: point both at the same model (the same path on every server).""")

def check(topo: Topology, plan: Plan):
    blocks = list(topo.disaggregations)
    listed: dict = {}
    for b in blocks:
        yield from _block(topo, b, listed)
    yield from _unpaired(topo, blocks, listed)
    version = parse_version(topo.vllm_version)
    for pair in plan.pairs:
        if not pair.prefill or not pair.decode:
            continue
        yield from _frameworks(pair)
        yield from _models(pair)
        if any(j.framework in _OWN_PD for j in pair.jobs):
            continue   # MindIE / SGLang move the KV cache themselves: no vLLM connector rules
        yield from _connectors(pair, topo.preset.is_gpu)
        nixl = all(j.kv_connector == "nixl" for j in pair.jobs)
        if not nixl:   # NixlConnector has no extra config and maps TP both ways
            yield from _instance_sizes(pair)
        yield from _tp_ratio(pair, nixl)
        yield from _decode_pp(pair)
        yield from _llmdatadist(topo, pair, version)


def _block(topo: Topology, b, listed: dict):
    """RTC522 for one disaggregation block: empty sides, unknown jobs, jobs listed twice
    (``listed``: job name -> first span, filled in here) and roles that differ from the
    side."""
    for side in ("prefill", "decode"):
        refs = getattr(b, side)
        if not refs:
            yield error(PAIRING, f"disaggregation{' ' + b.name if b.name else ''} has no "
                        f"{side} job", b.span, hint=f"add `{side} JOB`")
        for name, span in refs:
            job = topo.job(name)
            if job is None:
                import difflib

                close = difflib.get_close_matches(name, [j.name for j in topo.jobs], n=1)
                yield error(PAIRING, f"no job named '{name}'", span,
                            hint=f"did you mean '{close[0]}'?" if close else
                            "name a job of this file")
                continue
            if name in listed:
                yield error(PAIRING, f"job {name} is listed twice in disaggregation "
                            "blocks", span, related=[Related(listed[name], "first here")],
                            hint="list each job once")
                continue
            listed[name] = span
            if job.role != side:
                yield error(PAIRING, f"job {name} is listed as {side} but has role "
                            f"{job.role}", span, related=[Related(job.span_of("role"),
                                                                  "its role")],
                            hint=f"give it `role {side}`, or list it on the other side")


def _unpaired(topo: Topology, blocks: list, listed: dict):
    """RTC523: prefill/decode jobs in no block (when there are blocks), or one side
    without the other (when there are none)."""
    if blocks:
        for j in topo.jobs:
            if j.role in ("prefill", "decode") and j.name not in listed:
                yield warning(UNPAIRED, f"job {j.name} (role {j.role}) is in no "
                              "disaggregation block", j.span, subject=f"job {j.name}",
                              hint="list it in a disaggregation block")
    else:
        pre = [j for j in topo.jobs if j.role == "prefill"]
        dec = [j for j in topo.jobs if j.role == "decode"]
        for lone, other in ((pre, "decode"), (dec, "prefill")):
            if lone and not (pre and dec):
                yield warning(UNPAIRED, f"job {lone[0].name} has role {lone[0].role} but no "
                              f"job has role {other}", lone[0].span,
                              subject=f"job {lone[0].name}",
                              hint=f"add the {other} job, or change the role")


def _mindie_pair(pair) -> bool:
    """Both sides MindIE: MindIE moves the KV cache itself (``inferMode dmi``), with no
    vLLM connector (:mod:`rtc.plan.mindie`)."""
    return all(j.framework == "mindie" for j in pair.jobs)


#: Frameworks with their own prefill/decode transfer: MindIE (inferMode dmi), SGLang
#: (--disaggregation-mode with its transfer backend, rtc.plan.sglang_args).
_OWN_PD = {"mindie": "MindIE's prefill/decode (inferMode dmi) hands the KV cache only to "
                     "MindIE instances",
           "sglang": "SGLang's --disaggregation-mode hands the KV cache only to SGLang "
                     "servers (its transfer backend and bootstrap server)"}


def _frameworks(pair):
    """RTC528: jobs of a pair that are not vLLM jobs (a pair all of MindIE, or all of
    SGLang, is fine); a pair mixing MindIE or SGLang with another framework is one finding:
    the sides must match."""
    if _mindie_pair(pair) or all(j.framework == "sglang" for j in pair.jobs):
        return
    own = next((j for j in pair.jobs if j.framework in _OWN_PD), None)
    if own is not None:
        other = next(j for j in pair.jobs if j.framework != own.framework)
        yield error(PD_FRAMEWORK, f"prefill/decode pair mixes frameworks: job {own.name} "
                    f"has framework {own.framework}, job {other.name} framework "
                    f"{other.framework}; {_OWN_PD[own.framework]}", other.span_of("framework"),
                    subject=f"job {other.name}",
                    related=[Related(own.span_of("framework"), f"{own.name}'s")],
                    hint=f"give both sides the same framework: `framework {own.framework}` "
                         "on both, or `framework vllm` (with a `kv_connector`) on both")
        return
    for j in pair.jobs:
        if j.framework != "vllm":
            yield error(PD_FRAMEWORK, f"job {j.name} takes part in prefill/decode "
                        f"disaggregation but has framework {j.framework}",
                        j.span_of("framework"), subject=f"job {j.name}",
                        hint="use `framework vllm`")


def _connectors(pair, gpu: bool = False):
    """RTC521: a job of the pair without a KV connector, else two different connectors."""
    missing = [j for j in pair.jobs if not j.kv_connector]
    if missing:
        example = "nixl" if gpu else "mooncake_layerwise"
        yield error(CONNECTOR, f"job {missing[0].name} is a {missing[0].role} job without "
                    "`kv_connector`", missing[0].span, subject=f"job {missing[0].name}",
                    hint=f"add e.g. `kv_connector {example}` to both sides")
        return
    kinds = {j.kv_connector for j in pair.jobs}
    if len(kinds) > 1:
        a = pair.prefill[0]
        b = next(j for j in pair.jobs if j.kv_connector != a.kv_connector)
        yield error(CONNECTOR, f"jobs {a.name} and {b.name} use different KV "
                    f"connectors ({a.kv_connector}, {b.kv_connector})",
                    b.span_of("kv_connector"), subject=f"job {b.name}",
                    related=[Related(a.span_of("kv_connector"), f"{a.name}'s")],
                    hint="use one connector on both sides")


def _models(pair):
    """RTC529 when the jobs of a pair name different models."""
    named = [j for j in pair.jobs if j.launch.model is not None]
    first = named[0] if named else None
    other = next((j for j in named if j.launch.model != first.launch.model), None)
    if other is not None:
        yield warning(PD_MODEL, f"jobs {first.name} and {other.name} of one prefill/decode "
                      f"pair serve different models ({first.launch.model!r}, "
                      f"{other.launch.model!r})", other.launch.span_of("model", other.span),
                      subject=f"job {other.name}",
                      related=[Related(first.launch.span_of("model", first.span),
                                       f"{first.name}'s model")],
                      hint="give both sides the same `model` (the same weights and "
                           "tokenizer), or pair the jobs differently")


def _instance_sizes(pair):
    """RTC525: instances of one side (prefill, then decode) with different dp/tp/pp."""
    for side in (pair.prefill, pair.decode):
        shapes = {(j.dp, j.tp, j.pp) for j in side}
        if len(shapes) > 1:
            yield error(SIZES, f"the {side[0].role} jobs {', '.join(j.name for j in side)} "
                        "have different dp/tp/pp; kv_connector_extra_config can describe "
                        "only one shape", side[1].span, subject=f"job {side[1].name}",
                        hint="give the instances the same sizes")


def _tp_ratio(pair, nixl: bool = False):
    """RTC520: the first prefill job's TP below, or not a multiple of, the first decode
    job's TP. NixlConnector (``nixl``) maps either way: there, only the larger TP not being
    a multiple of the smaller is reported (vLLM docs features/nixl_connector_compatibility.md,
    heterogeneous TP; nixl_connector.py tp_ratio = local // remote TP)."""
    p, d = pair.prefill[0], pair.decode[0]
    if nixl:
        big, small = max(p.tp, d.tp), min(p.tp, d.tp)
        if big % small:
            yield error(TP_RATIO, f"prefill job {p.name} has tp {p.tp} and decode job "
                        f"{d.name} tp {d.tp}: NixlConnector needs the larger TP to be a "
                        "multiple of the smaller", p.span_of("tp"), subject=f"job {p.name}",
                        related=[Related(d.span_of("tp"), f"{d.name}'s tp")],
                        hint="e.g. prefill tp 8 with decode tp 4 or 16")
        return
    if p.tp < d.tp or p.tp % d.tp:
        why = "smaller than" if p.tp < d.tp else "not a multiple of"
        yield error(TP_RATIO, f"prefill job {p.name} has tp {p.tp}, {why} decode job "
                    f"{d.name}'s tp {d.tp}", p.span_of("tp"), subject=f"job {p.name}",
                    related=[Related(d.span_of("tp"), f"{d.name}'s tp")],
                    hint="prefill TP must be >= decode TP and a multiple of it")


def _decode_pp(pair):
    """RTC524: decode jobs with pipeline parallelism."""
    for j in pair.decode:
        if j.pp > 1:
            yield error(DECODE_PP, f"decode job {j.name} has pp {j.pp}; the KV connector "
                        "needs pp 1 on the decode side", j.span_of("pp"),
                        subject=f"job {j.name}", hint="use tp / dp on the decode side")


def _llmdatadist(topo: Topology, pair, version):
    """RTC526 / RTC527 for the pair's LLMDataDist jobs: the connector removed in the
    declared vLLM version; a replica that spans servers."""
    for j in pair.jobs:
        if j.kv_connector != "llmdatadist":
            continue
        if version is not None and version >= LLMDATADIST_REMOVED:
            yield error(LLMDD_REMOVED, f"job {j.name} uses the LLMDataDist connector, which "
                        f"vllm-ascend no longer has in {topo.vllm_version}",
                        j.span_of("kv_connector"), subject=f"job {j.name}",
                        hint="use `kv_connector mooncake` or `mooncake_layerwise`")
        try:
            pl = topo.placement(j)
        except Exception:  # noqa: BLE001
            continue
        if any(n.replica is not None and n.replica[2] > 1 for n in pl.nodes):
            yield error(LLMDD_TP, f"job {j.name}: a replica of {pl.replica_size} ranks spans "
                        "servers, which the LLMDataDist connector cannot read from its rank "
                        "table", j.span_of("kv_connector"), subject=f"job {j.name}",
                        hint="keep TP inside a server, or use a Mooncake connector")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (TP_RATIO, CONNECTOR, PAIRING, UNPAIRED, DECODE_PP, SIZES, LLMDD_REMOVED, LLMDD_TP,
         PD_FRAMEWORK, PD_MODEL)
