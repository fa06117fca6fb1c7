# vllm-version: 0.9.2
# expect: RTC501 6:1
export GLOO_SOCKET_IFNAME=eno0
## atlas-01
export HCCL_IF_IP=10.0.0.6
vllm serve /models/m --port 8000 -tp 4 -dp 4 -dpl 2 -dpr 0 --data-parallel-hybrid-lb \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
## atlas-02
export HCCL_IF_IP=10.0.0.5
vllm serve /models/m --port 8000 -tp 4 -dp 4 -dpl 2 -dpr 2 --data-parallel-hybrid-lb \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
