export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
export VLLM_HOST_IP=10.2.0.2
vllm serve deepseek-ai/DeepSeek-V3 --headless \
  --data-parallel-size 16 --data-parallel-size-local 8 --data-parallel-start-rank 8 \
  --data-parallel-address 10.2.0.1 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --enable-eplb --eplb-log-balancedness \
  --trust-remote-code
