# Shared environment of both D1 nodes (sourced by atlas-01.sh and atlas-02.sh).
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
export TP_SOCKET_IFNAME=eno0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_BUFFSIZE=1024
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_CONNECT_TIMEOUT=3600
export HCCL_EXEC_TIMEOUT=3600
export HCCL_P2P_DISABLE=1
export VLLM_RPC_TIMEOUT=1200
export OMP_NUM_THREADS=4
export OMP_PROC_BIND=false
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
