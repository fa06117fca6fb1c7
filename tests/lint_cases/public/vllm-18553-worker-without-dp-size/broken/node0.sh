#!/bin/bash
# node 0 (10.99.48.128): API server and DP ranks 0, 1
export GLOO_SOCKET_IFNAME=eth0
export VLLM_HOST_IP=10.99.48.128
vllm serve /models/Qwen3-30B-A3B \
  --data-parallel-size 4 \
  --data-parallel-size-local 2 \
  --data-parallel-address 10.99.48.128 \
  --data-parallel-rpc-port 13345
