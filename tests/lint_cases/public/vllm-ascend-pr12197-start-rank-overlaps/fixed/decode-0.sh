nic_name="eth0"
local_ip="10.52.0.21"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

vllm serve /models/GLM-5.2-w8a8 \
  --host 0.0.0.0 --port 9900 \
  --data-parallel-size 16 --data-parallel-size-local 8 \
  --data-parallel-address 10.52.0.21 --data-parallel-rpc-port 16600 \
  --tensor-parallel-size 2 --enable-expert-parallel \
  --served-model-name glm-5.2 --trust-remote-code
