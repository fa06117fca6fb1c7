export VLLM_HOST_IP=10.50.0.2
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
vllm serve Qwen/Qwen3-30B-A3B --headless \
  --data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-start-rank 2 \
  --data-parallel-address 10.50.0.1 --data-parallel-rpc-port 0 \
  --enable-expert-parallel
