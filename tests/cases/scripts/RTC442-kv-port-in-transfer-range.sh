# expect: RTC442 4:3
export HCCL_IF_IP=10.0.0.6
vllm serve /models/m --port 8000 -tp 8 \
  --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "20001"}'
