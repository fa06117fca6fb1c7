# expect: RTC431 6:6
# NPUs 4..7 are mounted; inside the container they are 0..3, but the script names 4..7.
export HCCL_IF_IP=10.0.0.6
docker run --rm --network host \
  --device /dev/davinci4 --device /dev/davinci5 --device /dev/davinci6 --device /dev/davinci7 \
  -e ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 \
  -e HCCL_IF_IP \
  vllm-ascend:latest vllm serve /models/m --port 8000 -tp 4
