# expect: none
export HCCL_IF_IP=10.0.0.6
python3 -m vllm.entrypoints.openai.api_server --model /models/m --port 8000 -tp 8 \
  --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "30000"}'
