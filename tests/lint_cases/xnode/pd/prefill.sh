# Prefill side of an LLMDataDist pair (vllm-ascend v0.11.0-dev examples/disaggregated_prefill_v1 shape)
export HCCL_IF_IP=10.0.0.1
export GLOO_SOCKET_IFNAME=eno0
export ASCEND_RT_VISIBLE_DEVICES=0,1
vllm serve /models/m --port 8100 --tensor-parallel-size 2 --kv-transfer-config '{"kv_connector":"LLMDataDistCMgrConnector","kv_role":"kv_producer","kv_port":"20001","engine_id":"0"}'
