#!/bin/bash
# Qwen3.5 on two Atlas A3 nodes, node rank 1
export SGLANG_ENABLE_SPEC_V2=1
export SGLANG_NPU_USE_MULTI_STREAM=1
export HCCL_BUFFSIZE=1000

# run ifconfig on both nodes and put here the interface that carries the node's own IP
export HCCL_SOCKET_IFNAME=lo
export GLOO_SOCKET_IFNAME=lo

P_MASTER="10.20.0.11:your port"

python -m sglang.launch_server --model-path /models/Qwen3.5-397B-A17B-w8a8 \
  --host 10.20.0.12 --port 8000 --trust-remote-code \
  --nnodes 2 --node-rank 1 --dist-init-addr $P_MASTER \
  --tp-size 32 --attention-backend ascend --device npu --quantization modelslim
