export CUDA_VISIBLE_DEVICES=4,5,6,7
python -m sglang.launch_server \
  --model-path /models/Qwen3-32B \
  --disaggregation-mode decode \
  --disaggregation-transfer-backend mooncake \
  --host 10.1.0.5 --port 30001 --tp 4
