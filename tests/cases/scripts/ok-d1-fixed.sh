# expect: none
# vllm-version: 0.29.0
# D1 as rtc now writes it: the head passes no start rank.
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
## atlas-01
export HCCL_IF_IP=10.0.0.6
vllm serve /models/m --port 8077 -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980 --enable-expert-parallel
## atlas-02
export HCCL_IF_IP=10.0.0.5
vllm serve /models/m --headless -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-start-rank 1 --data-parallel-address 10.0.0.6 \
  --data-parallel-rpc-port 12980 --enable-expert-parallel --api-server-count 0
