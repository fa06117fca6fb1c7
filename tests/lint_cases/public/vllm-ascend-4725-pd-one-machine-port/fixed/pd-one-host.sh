nic_name="enx00e04c6800bf"
local_ip="100.102.180.194"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export HCCL_BUFFSIZE=1024
# prefill
ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve /data/Qwen3-235B-A22B-w8a8 \
  --host 0.0.0.0 --port 8100 --tensor-parallel-size 8 --enable-expert-parallel \
  --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "36000", "engine_id": "0"}' &
# decode
export HCCL_IF_BASE_PORT=61000
ASCEND_RT_VISIBLE_DEVICES=8,9,10,11,12,13,14,15 vllm serve /data/Qwen3-235B-A22B-w8a8 \
  --host 0.0.0.0 --port 8200 --tensor-parallel-size 8 --enable-expert-parallel \
  --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_consumer", "kv_port": "36100", "engine_id": "1"}' &
wait
