export GLOO_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME=eth0
python3 -m sglang.launch_server --model-path /models/Qwen3-30B-A3B \
  --tp 16 --dp-size 2 --nnodes 2 --node-rank 0 --dist-init-addr 10.6.0.1:20000 \
  --host 10.6.0.1 --port 30000 --trust-remote-code
