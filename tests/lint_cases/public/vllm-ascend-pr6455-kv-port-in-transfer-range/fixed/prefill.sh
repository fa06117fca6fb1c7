nic_name="enp48s3u1u1"
local_ip="10.60.0.31"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

vllm serve /models/Qwen3-235B-A22B-W8A8 \
  --host 0.0.0.0 --port 8004 \
  --tensor-parallel-size 16 --enable-expert-parallel \
  --served-model-name qwen3 --trust-remote-code \
  --kv-transfer-config \
  '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "36012",
    "engine_id": "0",
    "kv_connector_extra_config": {"prefill": {"dp_size": 1, "tp_size": 16},
                                  "decode": {"dp_size": 1, "tp_size": 16}}}'
