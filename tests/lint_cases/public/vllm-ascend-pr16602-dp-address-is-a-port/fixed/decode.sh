export HCCL_IF_IP=10.70.3.5
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
SERVER_PORT=8080
DP_RPC_PORT=12321
DP_ADDRESS=10.70.3.5
vllm serve /models/GLM-5.1-w8a8 \
  --host 0.0.0.0 \
  --port $SERVER_PORT \
  --data-parallel-size 1 \
  --tensor-parallel-size 8 \
  --data-parallel-rpc-port ${DP_RPC_PORT} \
  --data-parallel-address ${DP_ADDRESS} \
  --served-model-name glm-5.1 \
  --trust-remote-code
