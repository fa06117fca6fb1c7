#!/bin/bash
# decode node 0 of the DeepSeek example on Atlas A3 (16 NPUs each)
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export STREAMS_PER_DEVICE=32
export ASCEND_MF_STORE_URL="tcp://10.30.0.1:24669"
export HCCL_SOCKET_IFNAME=enp23s0f3
export GLOO_SOCKET_IFNAME=enp23s0f3

python -m sglang.launch_server --model-path /models/DeepSeek-R1-w8a8 \
  --disaggregation-mode decode --host 10.30.0.1 --port 8001 --trust-remote-code \
  --nnodes 2 --node-rank 0 --dist-init-addr 10.30.0.1:5000 --tp-size 32 \
  --attention-backend ascend --device npu --quantization modelslim \
  --disaggregation-transfer-backend ascend 
