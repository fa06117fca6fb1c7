# expect: RTC700 3:12
export HCCL_IF_IP=10.0.0.6
vllm serve "/models/m --port 8000 -tp 8
