# expect: RTC458 3:8
export HCCL_IF_IP=10.0.0.6
export HCCL_BUFFSIZE=1GB
vllm serve /models/m -tp 8
