#!/bin/bash
export HCCL_IF_IP=10.4.0.1
export VLLM_HOST_IP=10.4.0.1
ray start --head --port=6379 --node-ip-address=10.4.0.1 --num-gpus=8
vllm serve /models/Qwen3-235B --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray --port 8000
