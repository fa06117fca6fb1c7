#!/bin/bash
export HCCL_IF_IP=10.1.0.2
export ASCEND_MF_STORE_URL=tcp://10.1.0.1:24667
export ASCEND_MF_TRANSFER_PROTOCOL=device_rdma
python3 -m sglang.launch_server --model-path /models/Qwen3-32B --tp-size 8 \
  --disaggregation-mode decode --disaggregation-transfer-backend ascend \
  --device npu --attention-backend ascend \
  --host 10.1.0.2 --port 8000
