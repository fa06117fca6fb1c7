export VLLM_HOST_IP=10.70.0.2
export GLOO_SOCKET_IFNAME=ib0
export NCCL_SOCKET_IFNAME=ib0
ray start --address 10.70.0.1:6379 --node-ip-address 10.70.0.2 --block
