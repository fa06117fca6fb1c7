export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
export VLLM_HOST_IP=10.30.0.2
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve MiniMaxAI/MiniMax-M2.5 --port 20005 --trust-remote-code \
  --tensor-parallel-size 8 \
  --kv-transfer-config '{"kv_connector": "MoRIIOConnector", "kv_role": "kv_consumer"}'
