#!/bin/bash
# D2 Ray head (atlas-01): PP stage 0
export HCCL_IF_IP=10.0.0.6
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_IF_BASE_PORT=50000

ray start --head --node-ip-address=10.0.0.6 --port=6379 --num-gpus=8
vllm serve /models/Qwen2.5-72B --distributed-executor-backend ray \
  --pipeline-parallel-size 2 --tensor-parallel-size 8
