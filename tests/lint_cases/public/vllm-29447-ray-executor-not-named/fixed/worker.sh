export VLLM_HOST_IP=10.9.0.12
export GLOO_SOCKET_IFNAME=enP5p9s0
export NCCL_SOCKET_IFNAME=enP5p9s0
export CUDA_VISIBLE_DEVICES=0,1,2,3
ray start --address 10.9.0.11:6379 --node-ip-address 10.9.0.12 --num-gpus 4 --block
