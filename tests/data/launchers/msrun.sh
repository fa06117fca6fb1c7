#!/bin/bash
export HCCL_IF_IP=10.3.0.1
msrun --worker_num=16 --local_worker_num=8 --master_addr=10.3.0.1 --master_port=8118 \
  --node_rank=0 --log_dir=msrun_log --join=True run_mindformer.py --config predict.yaml
