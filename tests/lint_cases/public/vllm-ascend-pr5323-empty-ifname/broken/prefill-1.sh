#!/bin/sh
ifname=""
local_ip="141.61.33.164"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$ifname
export TP_SOCKET_IFNAME=$ifname
export HCCL_SOCKET_IFNAME=$ifname
export HCCL_BUFFSIZE=256
vllm serve /weights/Qwen3-235B-A22B-w8a8 \
  --host 0.0.0.0 --port 8004 \
  --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-start-rank 1 \
  --headless \
  --data-parallel-address 141.61.33.163 --data-parallel-rpc-port 13389 \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --served-model-name qwen3 --trust-remote-code
