export VLLM_HOST_IP=10.20.1.11
export HCCL_IF_IP=10.20.1.11
export HCCL_CONNECT_TIMEOUT=120
export GLOO_SOCKET_IFNAME=bond0
export TP_SOCKET_IFNAME=bond0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
ray start --head --num-gpus=16 --port=6379
vllm serve /models/DeepSeek-V3-bf16 --trust-remote-code \
  --tensor-parallel-size 16 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray --max-model-len 8192
