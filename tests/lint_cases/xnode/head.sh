#!/bin/bash
# Two-node DeepSeek-style MoE on Atlas 800 A2: DP 4 (2 per node) x TP 4, expert parallel.
# Shape of vllm-ascend docs/source/tutorials multi-node DP pages, written in our own words.
nic_name="enp23s0f3"
local_ip="10.20.0.11"

export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

vllm serve /models/deepseek-v3-w8a8 \
  --host 0.0.0.0 \
  --port 8004 \
  --served-model-name deepseek \
  --data-parallel-size 4 \
  --data-parallel-size-local 2 \
  --data-parallel-address $local_ip \
  --data-parallel-rpc-port 13389 \
  --tensor-parallel-size 4 \
  --enable-expert-parallel \
  --quantization ascend \
  --max-num-seqs 16 \
  --max-model-len 8192 \
  --max-num-batched-tokens 4096 \
  --trust-remote-code \
  --gpu-memory-utilization 0.9 \
  --additional-config '{"ascend_scheduler_config":{"enabled":true}}'
