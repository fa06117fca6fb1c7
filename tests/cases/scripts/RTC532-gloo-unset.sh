# expect: RTC532 10:1
## atlas-01
export HCCL_IF_IP=10.0.0.6
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
ray start --head --node-ip-address=10.0.0.6 --port=6379 --num-gpus=8
vllm serve /models/m --distributed-executor-backend ray -pp 2 -tp 8
## atlas-02
export HCCL_IF_IP=10.0.0.5
ray start --address=10.0.0.6:6379 --node-ip-address=10.0.0.5 --num-gpus=8
