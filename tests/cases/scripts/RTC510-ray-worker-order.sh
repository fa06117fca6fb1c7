# expect: RTC510 5:1
## n1
export HCCL_IF_IP=10.0.0.8 GLOO_SOCKET_IFNAME=eno0
ray start --head --node-ip-address=10.0.0.8 --port=6379 --num-gpus=8
vllm serve /models/m --distributed-executor-backend ray -pp 3 -tp 8
## n2
export HCCL_IF_IP=10.0.0.9 GLOO_SOCKET_IFNAME=eno0
ray start --address=10.0.0.8:6379 --node-ip-address=10.0.0.9 --num-gpus=8
## n3
export HCCL_IF_IP=10.0.0.10 GLOO_SOCKET_IFNAME=eno0
ray start --address=10.0.0.8:6379 --node-ip-address=10.0.0.10 --num-gpus=8
