# expect: none
export HCCL_IF_IP=10.0.0.6
docker run --rm --network host \
  --device /dev/davinci4 --device /dev/davinci5 --device /dev/davinci6 --device /dev/davinci7 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \
  vllm-ascend:latest vllm serve /models/m --port 8000 -tp 4
