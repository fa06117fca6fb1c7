# expect: RTC210 5:43
# One node that is the whole job (no --headless, start rank, local DP size or --nnodes)
# and wants 16 NPUs with 8 visible: a real error, not a job whose other nodes are missing.
export HCCL_IF_IP=10.0.0.6
ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve /models/m --port 8077 -tp 16
