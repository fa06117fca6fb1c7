#!/bin/bash
export HCCL_IF_IP=10.4.0.2
export VLLM_HOST_IP=10.4.0.2
ray start --address=10.4.0.1:6379 --node-ip-address=10.4.0.2 --num-gpus=8 --block
