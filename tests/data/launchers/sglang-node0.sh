#!/bin/bash
export HCCL_IF_IP=10.0.0.1
export ASCEND_MF_STORE_URL=tcp://10.0.0.1:24667
python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp 16 \
  --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:5000 --trust-remote-code \
  --device npu --attention-backend ascend --host 0.0.0.0 --port 30000
