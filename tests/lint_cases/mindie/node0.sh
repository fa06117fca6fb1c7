#!/bin/bash
# MindIE multi-node (2 x A2), DeepSeek-R1 W8A8
source /usr/local/Ascend/ascend-toolkit/set_env.sh
source /usr/local/Ascend/nnal/atb/set_env.sh
source /usr/local/Ascend/mindie/set_env.sh
export RANK_TABLE_FILE=/root/rank_table_file.json
export MIES_CONTAINER_IP=10.0.0.6
export HCCL_DETERMINISTIC=false
export HCCL_CONNECT_TIMEOUT=7200
export WORLD_SIZE=16
export MASTER_IP=10.0.0.6
export ATB_LLM_HCCL_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
cd /usr/local/Ascend/mindie/latest/mindie-service
./bin/mindieservice_daemon
