# expect: RTC440 7:1
# Two vLLM servers on one host, each on four NPUs, both on HCCL's default port window.
export HCCL_IF_IP=10.0.0.6
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
vllm serve /models/a --port 8000 -tp 4 &
export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7
vllm serve /models/b --port 8001 -tp 4 &
wait
