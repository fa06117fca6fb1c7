export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
export VLLM_HOST_IP=10.3.0.1
vllm serve meta-llama/Llama-3.1-405B-Instruct \
  --tensor-parallel-size 16 --nnodes 2 --node-rank 0 \
  --master-addr 10.3.0.1 --master-port 29501 \
  --max-num-seqs 256 --max-num-batched-tokens 8192 --port 8000
