# expect: RTC453 3:8
export HCCL_IF_IP=10.0.0.6
export HCCL_SOCKET_IFNAME="eth0, eth1"
vllm serve /models/m -tp 8
