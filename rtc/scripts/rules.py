"""Rules of the script front end itself (RTC700-RTC709, RTC461-RTC464): what could not be read, what
rtc does not know, jobs whose other nodes' scripts are not given, and how the scripts compare
with a rank table (``rtc lint --table``). The launch, port and environment mistakes in the
scripts are reported by the compiler's own rules (:mod:`rtc.checks`) on the lifted plan."""

from __future__ import annotations

from rtc.rules import rule

UNREADABLE = rule("RTC700", "script-unreadable", "error",
                  "A script (or part of one) cannot be read as shell.", """
    What: a binary file, or a quote (or `${`, `$(`) that bash never sees closed, so that
    `bash -n` fails with "unexpected EOF while looking for matching"; bash pairs quotes
    inside `${...}` even between double quotes (an apostrophe in `"${X:?it's}"`); or an
    rtc description (`cluster NAME {`) given as a script (it belongs to `--against`).
    Why: bash would fail on it too (or run something else than what it looks like); rtc
    cannot tell what the node runs, so nothing of that line is checked.
    Example: `vllm serve "$MODEL --port 8000` (the closing quote is missing).
    Fix: close the quote; give rtc the text script, not an archive or a binary.""")
NOT_READ = rule("RTC701", "script-part-not-read", "note",
                "Part of a script is not read: a here-document, or a file it sources that cannot be read.", """
    What: `cat <<EOF ... EOF` (the text is input, not commands), `source FILE` where FILE
    does not exist here or its path uses variables the script does not set (e.g.
    `source /usr/local/Ascend/ascend-toolkit/set_env.sh` on a machine without CANN).
    Why: variables set in that part are unknown to rtc, so checks that need them are
    skipped or see the value set before.
    Example: `source $ASCEND_HOME/set_env.sh`.
    Fix: nothing, if the part sets nothing the launch depends on; else pass the env file
    too, or copy it next to the script.""")
UNKNOWN_COMMAND = rule("RTC702", "unknown-command", "note",
                       "Commands of the scripts that rtc does not know.", """
    What: commands other than the launches rtc reads (vllm serve, python -m
    vllm.entrypoints.openai.api_server, ray start, torchrun, msrun, docker run) and
    everyday tools.
    Why: what they start (a proxy, a custom launcher) is not checked.
    Example: `./start_proxy.sh`, `mindie_service`.
    Fix: nothing; the note lists them so you know what was not checked.""")
NO_LAUNCH = rule("RTC703", "script-starts-nothing", "warning",
                 "A script starts no process rtc recognises.", """
    What: a script (or `## node` section) without vllm serve, ray start, torchrun, msrun or
    a docker run of one of them, e.g. an env file given alone.
    Why: rtc lints launches; an env file on its own belongs to no node's process.
    Example: `rtc lint env.sh` where env.sh only exports variables.
    Fix: lint the script that sources it (rtc reads `source env.sh` itself).""")
HOST_NOT_IN_TABLE = rule("RTC704", "script-host-not-in-table", "error",
                         "A node of the scripts is not a server of the rank table.", """
    What: with `--table`, a script's host IP (HCCL_IF_IP, VLLM_HOST_IP, --host,
    --node-ip-address) is the host_ip of no server in the rank table, or the script gives
    no host IP at all.
    Why: HCCL finds a rank's server by the host IP; a node the table does not list has no
    ranks, and the job hangs at communicator init until HCCL_CONNECT_TIMEOUT.
    Example: the table lists 10.0.0.5 and 10.0.0.6, the script exports HCCL_IF_IP=10.0.0.7.
    Fix: correct the script's HCCL_IF_IP, or regenerate the table for the servers in use.""")
DEVICE_NOT_IN_TABLE = rule("RTC705", "script-device-not-in-table", "error",
                           "A script uses NPUs its server's rank table entry does not list.", """
    What: the devices a node's launch uses (ASCEND_RT_VISIBLE_DEVICES, mapped to physical
    ids inside a container) are not all device_ids of that server in `--table`.
    Why: HCCL binds each rank to the device_id of its rank table entry; a process on
    another NPU is not in the table and the communicator cannot be built.
    Example: ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 where the table lists 0..3.
    Fix: use the table's devices, or regenerate the table.""")
WORLD_NOT_TABLE = rule("RTC706", "script-world-not-table", "error",
                       "A job's world size in the scripts differs from the rank table's rank count.", """
    What: with `--table`, a job's world size (dp x pp x pcp x tp from the head's flags)
    is not the number of ranks in the table.
    Why: HCCL expects exactly the table's ranks; more or fewer processes wait for ranks
    that never come ("rank table rank count mismatch") or leave devices out.
    Example: `--tensor-parallel-size 8 --data-parallel-size 2` with a 8-rank table.
    Fix: make the flags and the table agree.""")

CRLF = rule("RTC708", "script-crlf", "error",
            "A script has Windows (CRLF) line endings.", """
    What: lines end in carriage return + line feed, as editors on Windows save them.
    Why: bash keeps the carriage return as part of the last word of every line: `--port
    8000` becomes `8000\r`, `then` and `fi` are not recognised, and the node fails with
    `$'\r': command not found` or an argument vLLM rejects.
    Example: a script edited on a laptop and copied to the servers.
    Fix: `sed -i 's/\r$//' SCRIPT` (or `dos2unix SCRIPT`). rtc reads the rest of the file
    as if the line endings were plain.""")

NODES_NOT_GIVEN = rule("RTC461", "job-nodes-not-given", "note",
                       "A multi-node job of which only some nodes' scripts are given.", """
    What: the launch says the job spans more nodes than the scripts given (a vLLM DP head
    with `--data-parallel-size-local` below `--data-parallel-size`, a `--headless` worker,
    `--nnodes N`, a Ray cluster, `torchrun --nnodes`), e.g. `rtc lint atlas-01.sh` of one
    node of an `rtc compile --out-dir`.
    Why: the rules that need all of a job's nodes (world size against the devices RTC210,
    DP rank coverage RTC302, start ranks RTC530, the DP head's address RTC451) would report
    the missing nodes as mistakes; they are skipped for that job, the other rules still run.
    Example: `cd out && rtc lint atlas-01.sh` where the job is dp 2 over atlas-01 and
    atlas-02.
    Fix: nothing, if you meant to lint one node; else lint every node's script in one run
    (`rtc lint out/*.sh`).""")

TABLE_BY_ORDER = rule("RTC462", "table-matched-by-order", "note",
                      "The scripts' nodes were matched to a rank table's servers by launch order.", """
    What: the rank table (`--table`, or the RANK_TABLE_FILE the scripts export) is a
    version 2.0 table (Ascend 950), which lists no host IPs: its servers are the level-0
    net instances in rank order; so does a 1.0 table whose server_id are names (as rtc
    compile writes them) when no node's script name is one of them. rtc lint gives node k of the launch (job by job, the DP
    head first, then by start rank) the table's server k, and says which pairs it made.
    Why: on a 2.0 table a process's rank is its place in the launch, not found by its host
    IP; the table's devices, EIDs and RoCE addresses are then the nodes' (RTC211, RTC221
    see them), and RTC705 / RTC706 compare the devices and world size.
    Example: `rtc lint out/*.sh` of `rtc compile examples/a5-2node-dp2-tp8.rtc --out-dir out`.
    Fix: nothing, if the pairs are right; else order the nodes' DP start ranks as the
    table's servers.""")
MINDIE_NOT_LINTED = rule("RTC463", "mindie-launch-not-linted", "note",
                         "A script starts MindIE Server, whose launch rtc lint does not lift.", """
    What: the script runs `mindieservice_daemon` (MindIE Server), as rtc's own MindIE
    launch scripts do, and starts no vLLM / Ray / torchrun / msrun process.
    Why: MindIE Server takes its parallel sizes and ports from its config.json, not from the
    command line, so the script alone does not say what it runs; its env (HCCL_IF_IP,
    ASCEND_RT_VISIBLE_DEVICES, RANK_TABLE_FILE) is read but the launch rules are not run.
    Example: `rtc lint out/*.sh` of `rtc compile examples/pd-mindie-a2.rtc --out-dir out`.
    Fix: nothing; check the description itself with `rtc check` (RTC656-RTC658 are
    MindIE's rules), and the rank table with `rtc validate`.""")
GPU_GUESSED = rule("RTC464", "gpu-hardware-guessed", "note",
                   "rtc lint took NVIDIA GPU hardware from the scripts, without its NVLink islands.", """
    What: no `--hardware` and no rank table, and the scripts export CUDA_VISIBLE_DEVICES
    or NCCL_* variables and no Ascend ones: rtc lint checks them as generic NVIDIA GPU
    servers with as many GPUs as the scripts use (ids from CUDA_VISIBLE_DEVICES).
    Why: the scripts do not say which GPUs the servers have, so the NVLink-island rules
    (RTC312, RTC313) have no islands to check against and are skipped; the other rules run.
    Example: `rtc lint out/*.sh` of `rtc compile examples/gpu-pcie-2x4-dp2-tp4.rtc`.
    Fix: give `--hardware hgx-h100` (or the preset of your servers) to run them too.""")

LOST_WORKER = rule("RTC709", "dp-worker-misses-head", "error",
                   "A headless DP worker does not name the DP head's host.", """
    What: a `vllm serve --headless` (or `--data-parallel-start-rank N`) script without
    `--data-parallel-address`, or with an address that is the host of none of the nodes
    given, linted with the DP head's script (same `--data-parallel-size` and rpc port).
    Why: the worker connects to the DP coordinator at `--data-parallel-address`; left out,
    vLLM takes 127.0.0.1, the worker's own host, and waits there for a head that is not
    there; an unknown host never answers either. The head waits for the worker for ever.
    Example: atlas-02 runs `vllm serve --headless -dp 2 -dpl 1 -dpr 1` and atlas-01 is the
    head with `--data-parallel-address 10.0.0.6`.
    Fix: give the worker `--data-parallel-address` with the head's host IP.""")

BAD_VALUE = rule("RTC720", "bad-launch-value", "error",
                 "A flag or variable of a launch has a value of the wrong type.", """
    What: a size or rank that is not a whole number in range (`--tensor-parallel-size
    four`, `0`, `-1`, a 20-digit `--data-parallel-size`, `torchrun --nnodes=abc
    --nproc-per-node=-1`), a port outside 1..65535 (vLLM also rejects rpc port 0), an
    address that is not one (`HCCL_IF_IP=141.61.39.317`, full-width digits `１０.0.0.1`),
    or a JSON flag that is not a JSON object (`--additional-config '{not json'`,
    `--kv-transfer-config`, `--hf-overrides`, `--compilation-config`), or a
    `--data-parallel-size-local` above `--data-parallel-size` (1 when not given: vLLM's
    ParallelConfig rejects it; vLLM issue 18553).
    Why: the framework stops at start-up (argparse "invalid int value", json.loads'
    "Expecting property name", HCCL "invalid ip"), often on one node only while the others
    wait for it until their timeouts.
    Example: `export HCCL_IF_IP=141.61.39.317`.
    Fix: write the value the flag takes; rtc's other rules use the framework's default in
    its place, so fix this first.""")
PLACEHOLDER = rule("RTC721", "placeholder-value", "error",
                   "A launch still holds a placeholder where an address must be.", """
    What: `x.x.x.x`, `<IP>`, `PIP`, `your_ip`, `TODO`, `xxxx` copied from a tutorial, or
    `0.0.0.0` / `::` in a place another node connects to (`--data-parallel-address`,
    `--master-addr`, `ray start --address`, `HCCL_IF_IP`, `VLLM_HOST_IP`, `MASTER_ADDR`,
    SGLang's `--dist-init-addr` host or port), or the loopback address (127.0.0.1, ::1,
    localhost) in `ray start --address` or the address variables of a `ray start` (vLLM
    issue 19543).
    Why: the process cannot bind or reach it; the peers hang in the rendezvous until their
    timeout, or HCCL reports an invalid address.
    Example: `head_ip="x.x.x.x"` then `--data-parallel-address $head_ip`.
    Fix: write the real address (the head node's for addresses a peer connects to, the
    node's own for HCCL_IF_IP / VLLM_HOST_IP).""")

MASTER_ADDR_DEFAULT = rule("RTC724", "master-addr-default", "error",
                          "A vLLM node of an --nnodes launch leaves --master-addr at 127.0.0.1.", """
    What: `vllm serve --nnodes N` (N > 1, the multiprocessing executor across nodes) without
    `--master-addr`: vLLM's ParallelConfig.master_addr defaults to 127.0.0.1
    (vllm/config/parallel.py, vLLM 0.11.1 on).
    Why: node rank 0 serves the torch.distributed store and the message queues at
    master_addr and the other nodes connect to it; with the loopback default the head
    listens where no other node can reach it and each worker dials itself, so the launch
    hangs until the distributed timeout (vllm-project.github.io PR 284, the K3 blog).
    Example: `vllm serve moonshotai/Kimi-K3 -tp 8 --nnodes 2 --node-rank 0`.
    Fix: give every node `--master-addr <node rank 0's IP>` (and the same
    `--master-port`).""")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNREADABLE, CRLF, NOT_READ, UNKNOWN_COMMAND, NO_LAUNCH, HOST_NOT_IN_TABLE,
         DEVICE_NOT_IN_TABLE, WORLD_NOT_TABLE, NODES_NOT_GIVEN, TABLE_BY_ORDER,
         MINDIE_NOT_LINTED, GPU_GUESSED, LOST_WORKER, BAD_VALUE, PLACEHOLDER,
         MASTER_ADDR_DEFAULT)
