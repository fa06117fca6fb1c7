# expect: none
# Two vLLM servers on one host, each with its own HCCL window and port.
export HCCL_IF_IP=10.0.0.6
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
export HCCL_IF_BASE_PORT=60000
vllm serve /models/a --port 8000 -tp 4 &
export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7
export HCCL_IF_BASE_PORT=60032
vllm serve /models/b --port 8001 -tp 4 &
wait
