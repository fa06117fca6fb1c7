#!/bin/bash
docker run --rm --network host --shm-size 16g \
  --device /dev/davinci4 --device /dev/davinci5 --device /dev/davinci6 --device /dev/davinci7 \
  --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc \
  -v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/Ascend/driver:/usr/local/Ascend/driver \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \
  quay.io/ascend/vllm-ascend:v0.11.0 \
  vllm serve /models/Qwen3-32B --tensor-parallel-size 4 --port 8000
