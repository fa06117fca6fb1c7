# expect: RTC530 9:59
# Two DP groups meant to be independent share one endpoint (10.0.0.6:12321): to vLLM they
# are one group with two rank-0 engines.
export GLOO_SOCKET_IFNAME=eno0
## atlas-01
export HCCL_IF_IP=10.0.0.6
ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 vllm serve /models/m --port 8000 -tp 4 -dp 2 -dpl 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12321 &
ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 HCCL_IF_BASE_PORT=60032 vllm serve /models/m --port 8001 -tp 4 -dp 2 -dpl 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12321 &
## atlas-02
export HCCL_IF_IP=10.0.0.5
ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 vllm serve /models/m --headless -tp 4 -dp 2 -dpl 1 -dpr 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12321 &
