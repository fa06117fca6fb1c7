export VLLM_HOST_IP=10.40.0.1
export VLLM_NIXL_SIDE_CHANNEL_HOST=10.40.0.1
export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
vllm serve deepseek-ai/DeepSeek-V3 --port 8100 --trust-remote-code \
  --data-parallel-size 8 --enable-expert-parallel \
  --kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'
