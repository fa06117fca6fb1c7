export HCCL_IF_IP=10.12.3.4
export ASCEND_RT_VISIBLE_DEVICES=4,5
vllm serve /data/models/Qwen2-VL-7B --host 10.12.3.4 --port 9002 \
  --tensor-parallel-size 2 --served-model-name qwen2-vl-7b --dtype bfloat16 &
export ASCEND_RT_VISIBLE_DEVICES=6,7
export HCCL_IF_BASE_PORT=61000
vllm serve /data/models/Qwen2.5-7B --host 10.12.3.4 --port 9003 \
  --tensor-parallel-size 2 --served-model-name qwen2.5-7b --dtype bfloat16 &
wait
