#!/bin/bash
# D2 Ray worker (atlas-02): PP stage 1
export HCCL_IF_IP=10.0.0.5
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_IF_BASE_PORT=50000

ray start --address=10.0.0.6:6379 --node-ip-address=10.0.0.5 --num-gpus=8
