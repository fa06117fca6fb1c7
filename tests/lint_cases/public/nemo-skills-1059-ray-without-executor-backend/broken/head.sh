export VLLM_HOST_IP=10.70.0.1
export GLOO_SOCKET_IFNAME=ib0
export NCCL_SOCKET_IFNAME=ib0
ray start --head --node-ip-address 10.70.0.1 --port 6379
vllm serve meta-llama/Llama-3.1-405B-Instruct --port 5000 --tensor-parallel-size 16
