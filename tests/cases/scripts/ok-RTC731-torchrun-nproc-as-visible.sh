# expect: none
# 8 processes per node, 8 NPUs visible.
export HCCL_IF_IP=10.20.0.1
export GLOO_SOCKET_IFNAME=bond0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
NPUS=8
torchrun --nproc_per_node $NPUS --nnodes 1 --node_rank 0 --master_addr 10.20.0.1 --master_port 6000 pretrain_gpt.py \
  --tensor-model-parallel-size 8
