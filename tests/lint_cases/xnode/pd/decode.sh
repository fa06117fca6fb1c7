# Decode side of the same pair
export HCCL_IF_IP=10.0.0.2
export GLOO_SOCKET_IFNAME=eno0
export ASCEND_RT_VISIBLE_DEVICES=0
vllm serve /models/m --port 8200 --tensor-parallel-size 1 --kv-transfer-config '{"kv_connector":"LLMDataDistCMgrConnector","kv_role":"kv_consumer","kv_port":"20001","engine_id":"1"}'
