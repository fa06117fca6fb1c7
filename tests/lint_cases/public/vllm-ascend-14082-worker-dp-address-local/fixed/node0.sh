nic_name="enp67s0f0np0"
local_ip="192.168.1.10"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

vllm serve /models/GLM-5.2-w8a8 \
  --host 0.0.0.0 --port 8077 \
  --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $local_ip --data-parallel-rpc-port 12980 \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --seed 1024 --gpu-memory-utilization 0.95 --max-num-seqs 16 \
  --served-model-name glm-5.2 --trust-remote-code
