export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_HCA=mlx5_0
python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 \
  --tp 16 --dist-init-addr 10.0.0.1:5000 --nnodes 2 --node-rank 1 \
  --trust-remote-code --host 10.0.0.2 --port 30000
