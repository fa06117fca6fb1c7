# expect: RTC730 14:68
# The worker's --master_addr names a host no node has; node rank 0 serves the rendezvous
# at 10.20.0.1.
## n0
export HCCL_IF_IP=10.20.0.1
export GLOO_SOCKET_IFNAME=bond0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
torchrun --nproc_per_node 8 --nnodes 2 --node_rank 0 --master_addr 10.20.0.1 --master_port 6000 pretrain_gpt.py \
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2
## n1
export HCCL_IF_IP=10.20.0.2
export GLOO_SOCKET_IFNAME=bond0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
torchrun --nproc_per_node 8 --nnodes 2 --node_rank 1 --master_addr 10.20.0.3 --master_port 6000 pretrain_gpt.py \
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2
