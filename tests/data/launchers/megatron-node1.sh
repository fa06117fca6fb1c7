#!/bin/bash
# GPT pretraining over two 8-NPU nodes, the launcher's flags kept in one variable
# (shape of NVIDIA/Megatron-LM examples/pretrain_gpt_distributed.sh; our words and values)
export HCCL_IF_IP=10.3.0.12
export GLOO_SOCKET_IFNAME=bond0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

DEVICES_PER_NODE=${DEVICES_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-10.3.0.11}
MASTER_PORT=${MASTER_PORT:-6000}
NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-1}
WORLD_SIZE=$(($DEVICES_PER_NODE*$NNODES))

DATA_PATH=/data/corpus/text_document
CKPT=/data/ckpt/gpt

DISTRIBUTED_ARGS="--nproc_per_node $DEVICES_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

torchrun $DISTRIBUTED_ARGS \
       pretrain_gpt.py \
       --tensor-model-parallel-size 8 \
       --pipeline-model-parallel-size 2 \
       --num-layers 24 \
       --hidden-size 1024 \
       --micro-batch-size 4 \
       --global-batch-size 32 \
       --save $CKPT \
       --load $CKPT \
       --data-path $DATA_PATH \
       --distributed-backend nccl
