nic_name="enp189s0f0"
local_ip="172.30.8.22"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

master_ip="172.30.8.21"
vllm serve /weights/GLM-5.2-w8a8 \
  --host 0.0.0.0 --port 8000 \
  --headless \
  --api-server-count 1 \
  --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-start-rank 1 \
  --data-parallel-address 172.30.8.22 --data-parallel-rpc-port 13389 \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --served-model-name glm5 --trust-remote-code
