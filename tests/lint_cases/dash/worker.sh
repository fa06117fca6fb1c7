#!/bin/bash
export HCCL_IF_IP=192.168.1.11
export VLLM_HOST_IP=192.168.1.11
export HCCL_SOCKET_IFNAME=enp189s0f0
export GLOO_SOCKET_IFNAME=enp189s0f0
export TP_SOCKET_IFNAME=enp189s0f0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_BUFFSIZE=512
export OMP_NUM_THREADS=1
vllm serve /data/Qwen3-235B-A22B \
  --host 0.0.0.0 --port 8004 —headless \
  --data-parallel-size 4 --data-parallel-size-local 2 \
  --data-parallel-start-rank 2 \
  --data-parallel-address 192.168.1.10 --data-parallel-rpc-port 13389 \
  --tensor-parallel-size 4 --enable-expert-parallel \
  --seed 1024 --served-model-name qwen3 --max-model-len 32768 \
  --trust-remote-code --gpu-memory-utilization 0.9
