nic_name="enp67s0f0np0"
local_ip="192.168.1.11"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

node0_ip="192.168.1.10"
vllm serve /models/GLM-5.2-w8a8 \
  --host 0.0.0.0 --port 8077 \
  --seed 1024 --gpu-memory-utilization 0.95 \
  --max-num-seqs 16 \
  --headless \
  --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-start-rank 1 \
  --data-parallel-address $node0_ip --data-parallel-rpc-port 12980 \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --served-model-name glm-5.2 --trust-remote-code
