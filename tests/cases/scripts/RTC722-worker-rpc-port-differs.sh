# expect: RTC722 11:36
## atlas-01
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --port 8077 -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
## atlas-02
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --headless -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12981 \
  --data-parallel-start-rank 1
