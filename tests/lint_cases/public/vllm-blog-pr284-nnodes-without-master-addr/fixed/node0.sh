#!/bin/bash
# node rank 0 of the two-node recipe (its head); only this node is shown
export NCCL_DMABUF_ENABLE=0
export VLLM_ALLREDUCE_USE_FLASHINFER=1
export VLLM_ENGINE_READY_TIMEOUT_S=3600
export GLOO_SOCKET_IFNAME=eth0
export HEAD_ADDR=127.0.0.1  # change when the benchmark client runs elsewhere

vllm serve moonshotai/Kimi-K3 \
  --enable-prefix-caching \
  --tensor-parallel-size 8 \
  --nnodes 2 \
  --node-rank 0 --master-addr 10.40.0.1 --master-port 29501 \
  --host 0.0.0.0 --port 8000
