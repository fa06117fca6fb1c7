export VLLM_HOST_IP=10.60.0.12
export GLOO_SOCKET_IFNAME=enp1s0f0
export NCCL_SOCKET_IFNAME=enp1s0f0
vllm serve Qwen/Qwen3-Next-80B-A3B-FP8 --headless \
  --tensor-parallel-size 2 --nnodes 2 --node-rank 1 \
  --master-addr 10.60.0.11 --master-port 29501
