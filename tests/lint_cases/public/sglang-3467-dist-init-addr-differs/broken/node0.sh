#!/bin/bash
# rank 0 of two nodes, four GPUs each
export CUDA_VISIBLE_DEVICES=0,1,2,3
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
python -m sglang.launch_server \
  --model-path /data/models/llama-70b-distill \
  --tp 8 --dist-init-addr 10.68.27.12:5000 --nnodes 2 --node-rank 0 --trust-remote-code \
  --host 0.0.0.0 --port 3000
