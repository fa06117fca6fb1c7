#!/bin/bash
# D1 worker: DP rank 1, headless
source ./env.sh
export HCCL_IF_IP=10.0.0.5
MODEL=/models/DeepSeek-R1-W8A8

vllm serve "$MODEL" \
  --port 8078 \
  --headless \
  --tensor-parallel-size 8 \
  --data-parallel-size 2 \
  --data-parallel-size-local 1 \
  --data-parallel-start-rank 1 \
  --data-parallel-address 10.0.0.6 \
  --data-parallel-rpc-port 12980 \
  --enable-expert-parallel \
  --api-server-count 0 \
  --max-model-len 8192
