# expect: RTC531 11:36
## atlas-01
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --port 8077 -tp 4 -dp 4 -dpl 2 --data-parallel-hybrid-lb \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
## atlas-02
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --headless -tp 4 -dp 4 -dpl 2 -dpr 2 \
  --data-parallel-address 10.0.0.6 --data-parallel-hybrid-lb --data-parallel-rpc-port 12980
