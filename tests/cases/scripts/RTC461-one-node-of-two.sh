# expect: RTC461 7:1
# The head of a two-node DP job linted alone: the worker's script is not given, so world
# size, DP coverage and start ranks are not judged (a note, not RTC210 / RTC302 errors).
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
export HCCL_SOCKET_IFNAME=eno0
vllm serve /models/m --port 8077 -tp 8 -dp 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.0.0.6 --data-parallel-rpc-port 12980
