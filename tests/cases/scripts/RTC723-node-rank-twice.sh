# expect: RTC723 13:56
## atlas-01
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --port 8077 -tp 8 -pp 3 --nnodes 3 --node-rank 0 --master-addr 10.0.0.5 --master-port 29600
## atlas-02
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --headless -tp 8 -pp 3 --nnodes 3 --node-rank 1 --master-addr 10.0.0.5 --master-port 29600
## atlas-03
export HCCL_IF_IP=10.0.0.7
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --headless -tp 8 -pp 3 --nnodes 3 --node-rank 1 --master-addr 10.0.0.5 --master-port 29600
