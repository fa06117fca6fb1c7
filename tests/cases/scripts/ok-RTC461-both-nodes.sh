# expect: none
# The job of RTC461-one-node-of-two.sh with both nodes' scripts: no note.
export GLOO_SOCKET_IFNAME=eno0
export HCCL_SOCKET_IFNAME=eno0
## atlas-01
export HCCL_IF_IP=10.0.0.6
vllm serve /models/m --port 8077 -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
## atlas-02
export HCCL_IF_IP=10.0.0.5
vllm serve /models/m --headless -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-start-rank 1 --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
