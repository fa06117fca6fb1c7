nic_name="enp48s3u1u1"
local_ip="10.40.1.12"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export HCCL_BUFFSIZE=1024

head_ip="10.40.1.11"
vllm serve /weights/DeepSeek-V3.2-W8A8 \
  --host 0.0.0.0 \
  --port 8004 \
  --data-parallel-size 2 \
  --data-parallel-size-local 1 \
  --data-parallel-start-rank 1 \
  --data-parallel-address $head_ip \
  --data-parallel-rpc-port 13389 \
  --tensor-parallel-size 16 \
  --enable-expert-parallel \
  --served-model-name dsv32 \
  --max-model-len 16384 \
  --trust-remote-code
