# expect: RTC455 3:8
export HCCL_IF_IP=10.0.0.6
export HCCL_P2P_DISABLE=1
vllm serve /models/m -tp 8
