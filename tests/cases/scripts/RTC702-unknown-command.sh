# expect: RTC702 3:1
export HCCL_IF_IP=10.0.0.6
./start_proxy.sh --port 9000 &
vllm serve /models/m -tp 8
