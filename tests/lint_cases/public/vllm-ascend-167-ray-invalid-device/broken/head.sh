export HCCL_IF_IP=192.168.0.10
export GLOO_SOCKET_IFNAME=enp189s0f0
export TP_SOCKET_IFNAME=enp189s0f0
ray start --head --num-gpus=8
vllm serve /models/Qwen2.5-72B-Instruct \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray --max-model-len 8192
