export VLLM_HOST_IP=10.8.0.11
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
export CUDA_VISIBLE_DEVICES=0
ray start --head --port 6379 --num-gpus 1
vllm serve ./DeepSeek-V3 --trust-remote-code --tensor-parallel-size 1 --pipeline-parallel-size 2 --distributed-executor-backend ray
