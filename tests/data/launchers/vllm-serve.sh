#!/bin/bash
export HCCL_IF_IP=10.5.0.1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
vllm serve /models/Qwen3-32B --tensor-parallel-size 4 --port 8000
