#!/bin/bash
# node 1: DP ranks 2, 3, headless
export GLOO_SOCKET_IFNAME=eth0
export VLLM_HOST_IP=10.99.48.129
vllm serve /models/Qwen3-30B-A3B --headless \
  --data-parallel-size 4 \
  --data-parallel-size-local 2 \
  --data-parallel-start-rank 2 \
  --data-parallel-address 10.99.48.128 \
  --data-parallel-rpc-port 13345
