#!/bin/bash
# first Slurm allocation (host gpu-v100-01): 8 x V100, runs node rank 0
export HF_HOME=/hf_cache
export GLOO_SOCKET_IFNAME=ib0
export NCCL_SOCKET_IFNAME=ib0
singularity exec --nv --bind /scratch/cache:/hf_cache /images/sglang.sif bash -c \
  "export OUTLINES_CACHE_DIR=/ocache/${SLURM_JOB_ID}_0 && \
   python3 -m sglang.launch_server \
     --model-path meta-llama/Llama-3.1-70B \
     --tp 16 \
     --dist-init-addr $(hostname):5000 \
     --nnodes 2 \
     --node-rank 0 \
     --trust-remote-code \
     --host 0.0.0.0 \
     --port 40000"
