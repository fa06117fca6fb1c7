#!/bin/bash
# the worker node's Ray container (the head runs ray start --head on 10.60.0.184)
docker run -d \
  --entrypoint /bin/bash \
  --network host \
  --runtime=nvidia \
  --name workernode \
  --shm-size 10.24g \
  --gpus "device=3" \
  -e VLLM_HOST_IP=127.0.0.1 \
  -e MASTER_ADDR=127.0.0.1 \
  -e MASTER_PORT=29500 \
  -e GLOO_SOCKET_IFNAME=eth0 \
  -v /data:/data \
  registry.local/ai/vllm:0.7.3-cuda12.4 \
  -c "ray start --block --address=127.0.0.1:6379"
