#!/bin/bash
# D1 head: DP rank 0, API server (as the operators ran it)
source ./env.sh
export HCCL_IF_IP=10.0.0.6
MODEL=/models/DeepSeek-R1-W8A8

vllm serve "$MODEL" \
  --port 8077 \
  --tensor-parallel-size 8 \
  --data-parallel-size 2 \
  --data-parallel-size-local 1 \
  --data-parallel-start-rank 0 \
  --data-parallel-address 10.0.0.6 \
  --data-parallel-rpc-port 12980 \
  --enable-expert-parallel \
  --api-server-count 1 \
  --max-model-len 8192
