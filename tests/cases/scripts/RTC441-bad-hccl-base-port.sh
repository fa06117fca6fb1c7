# expect: RTC441 3:8
export HCCL_IF_IP=10.0.0.6
export HCCL_IF_BASE_PORT=70000
vllm serve /models/m -tp 8
