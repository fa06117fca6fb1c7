#!/bin/bash
export HCCL_IF_IP=10.2.0.1
torchrun --nnodes=2 --node_rank=0 --nproc_per_node=8 --master_addr=10.2.0.1 \
  --master_port=29500 pretrain_gpt.py --tensor-model-parallel-size 8
