#!/bin/bash
# rank 1 of two nodes
export CUDA_VISIBLE_DEVICES=0,1,2,3
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
python -m sglang.launch_server \
  --model-path /data/models/llama-70b-distill \
  --tp 8 --dist-init-addr 10.0.1.104:5000 --nnodes 2 --node-rank 1 --trust-remote-code
