# expect: RTC720 5:10
# expect: RTC720 5:23
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
torchrun --nnodes=abc --nproc-per-node=-1 --node_rank=0 --master_addr=10.0.0.5 \
  --master_port=29500 train.py
