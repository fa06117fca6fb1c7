#!/bin/bash
# sglang serve (the CLI entry point), DP attention over TP 8 on one GPU server
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
sglang serve --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --enable-dp-attention \
  --ep 8 --host 0.0.0.0 --port 30000
