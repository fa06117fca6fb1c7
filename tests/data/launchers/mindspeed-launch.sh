#!/bin/bash
# One 8-NPU node, MindSpeed-LLM style: the launcher's flags in a multi-line variable with
# `\` continuations inside the quotes, the model's flags in more variables
# (shape of Ascend/MindSpeed-LLM examples/mcore/*/pretrain_*_ptd.sh; our words and values)
export CUDA_DEVICE_MAX_CONNECTIONS=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

NPUS_PER_NODE=8
MASTER_ADDR=localhost
MASTER_PORT=6000
NNODES=1
NODE_RANK=0

TP=4
PP=2

DISTRIBUTED_ARGS="
    --nproc_per_node $NPUS_PER_NODE \
    --nnodes $NNODES \
    --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR \
    --master_port $MASTER_PORT
"

GPT_ARGS="
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size ${PP} \
    --sequence-parallel \
    --num-layers 32 \
    --micro-batch-size 1 \
    --global-batch-size 64
"

python -m torch.distributed.launch $DISTRIBUTED_ARGS pretrain_gpt.py \
    $GPT_ARGS \
    --distributed-backend nccl \
    | tee logs/pretrain_ptd.log
