export VLLM_HOST_IP=10.9.0.11
export GLOO_SOCKET_IFNAME=enP5p9s0
export NCCL_SOCKET_IFNAME=enP5p9s0
export CUDA_VISIBLE_DEVICES=0,1,2,3
ray start --head --node-ip-address 10.9.0.11 --port 6379 --num-gpus 4
vllm serve meta-llama/Llama-3.3-70B-Instruct --gpu-memory-utilization 0.9 \
  --served-model-name llama3.3-70b --tensor-parallel-size 8 \
  --pipeline-parallel-size 1 --data-parallel-size 1 --max-model-len 2048 --port 8000
