export HCCL_IF_IP=192.168.0.11
export GLOO_SOCKET_IFNAME=enp189s0f0
export TP_SOCKET_IFNAME=enp189s0f0
ray start --address=192.168.0.10:6379 --num-gpus=8 --block
