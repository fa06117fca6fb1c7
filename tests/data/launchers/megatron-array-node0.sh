#!/bin/bash
# GPT pretraining over two 8-GPU nodes, torchrun's and the model's flags kept in bash
# arrays (shape of NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh;
# our words and values)
export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_SOCKET_IFNAME=eth1
export GLOO_SOCKET_IFNAME=eth1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

GPUS_PER_NODE=8
# set these per node
MASTER_ADDR=10.4.0.21
MASTER_PORT=6100
NUM_NODES=2
NODE_RANK=0

CKPT_DIR=/data/ckpt/gpt-small
DATA_PREFIX=/data/corpus/web_text_document

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE 
    --nnodes $NUM_NODES 
    --node_rank $NODE_RANK
    --master_addr $MASTER_ADDR 
    --master_port $MASTER_PORT
)

MODEL_ARGS=(
    --num-layers 24 
    --hidden-size 2048 
    --num-attention-heads 16 
    --seq-length 4096 
    --attention-backend auto # one of (flash/fused/unfused/local)
)

PARALLEL_ARGS=(
	--tensor-model-parallel-size 4 
	--pipeline-model-parallel-size 2 
)

IO_ARGS=(
    --data-path $DATA_PREFIX 
    --save $CKPT_DIR 
    --load $CKPT_DIR
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${PARALLEL_ARGS[@]} \
    ${IO_ARGS[@]}
