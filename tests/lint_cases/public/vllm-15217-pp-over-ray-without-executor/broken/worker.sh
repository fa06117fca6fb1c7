export VLLM_HOST_IP=10.8.0.12
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
export CUDA_VISIBLE_DEVICES=0
ray start --address 10.8.0.11:6379 --num-gpus 1 --block
